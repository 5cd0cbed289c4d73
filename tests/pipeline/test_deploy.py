"""deploy/: the code location's Dockerfile and the values for Dagster's Helm chart, checked statically.

No Docker daemon, no cluster and no chart registry are reachable here, so neither file has been
built or installed: these tests check what can be checked without them. Files present; the image
installs the lock, which holds dagster-postgres and dagster-k8s at the release that goes with its
dagster; everything the image copies exists; the module it serves loads the
definitions; the chart version is the lock's dagster; the values have the keys the deployment
rests on (K8sRunLauncher, the chart's Postgres, the QueuedRunCoordinator, the `warehouse` pool at
one slot, every mounted volume declared)."""

from __future__ import annotations

import re

import yaml

from workbank_dagster.settings import REPO_ROOT

DEPLOY = REPO_ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
VALUES = DEPLOY / "helm" / "values.yaml"


def lock() -> dict[str, str]:
    pins = {}
    for line in (REPO_ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split(";")[0].strip().split("==")
            pins[name.lower()] = version
    return pins


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", "\n".join(line for line in DOCKERFILE.read_text().splitlines() if not line.lstrip().startswith("#")))
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in text.splitlines() if line.strip()]


def values() -> dict:
    return yaml.safe_load(VALUES.read_text())


def test_the_image_installs_the_locked_versions():
    pins = lock()
    instructions = dockerfile_instructions()
    (base,) = [args for op, args in instructions if op == "FROM"]
    assert base.startswith("python:3.11-"), base  # the project's Python (pyproject requires-python)
    installs = " ".join(args for op, args in instructions if op == "RUN" and "pip install" in args)
    assert "-r requirements.lock" in installs
    pinned = dict(re.findall(r"([A-Za-z0-9_.-]+)==([0-9][^\s]*)", installs))  # any pin beside the lock
    # dagster's integration libraries are versioned 0.<minor+16>.<patch> beside dagster 1.<minor>.<patch>:
    # the instance's storage and run launcher come with the lock, at dagster's release.
    major, minor, patch = pins["dagster"].split(".")
    companion = f"0.{int(minor) + 16}.{patch}"
    assert pins["dagster-k8s"] == pins["dagster-postgres"] == companion
    for name, version in pinned.items():
        assert pins.get(name.lower(), companion) == version, f"{name}=={version}, the lock says {pins.get(name.lower())}"


def test_the_image_copies_what_exists_and_serves_the_definitions():
    instructions = dockerfile_instructions()
    for op, args in instructions:
        if op == "COPY":
            for source in args.split()[:-1]:
                assert (REPO_ROOT / source).exists(), source
    (cmd,) = [args for op, args in instructions if op == "CMD"]
    module = re.search(r'"--module-name", "([\w.]+)"', cmd).group(1)
    assert module == "workbank_dagster.definitions" and (REPO_ROOT / "workbank_dagster" / "definitions.py").is_file()
    run = " ".join(args for op, args in instructions if op == "RUN")
    assert "dbt parse" in run and "labeling.onnx_model" in run  # nothing parsed or exported at run time
    assert any(op == "USER" and args.strip() != "root" for op, args in instructions)


def test_the_chart_version_is_the_locked_dagster():
    versions = re.findall(r"dagster/dagster --version (\S+)", VALUES.read_text())
    assert versions == [lock()["dagster"]]


def test_the_values_hold_the_deployment():
    v = values()
    launcher = v["runLauncher"]
    assert launcher["type"] == "K8sRunLauncher"
    k8s = launcher["config"]["k8sRunLauncher"]
    assert {"name": "workbank-settings"} in k8s["envConfigMaps"]
    assert v["postgresql"]["enabled"] is True
    assert v["dagsterDaemon"]["runCoordinator"]["type"] == "QueuedRunCoordinator"
    assert v["dagsterDaemon"]["runMonitoring"]["enabled"] is True
    concurrency = v["concurrency"]
    assert concurrency["enabled"] is True and concurrency["pools"] == {"defaultLimit": 1, "granularity": "run"}
    (deployment,) = v["dagster-user-deployments"]["deployments"]
    assert deployment["codeServerArgs"] == ["--module-name", "workbank_dagster.definitions"]
    assert deployment["port"] == 4000 and 'EXPOSE 4000' in DOCKERFILE.read_text()
    for spec in (k8s, deployment):
        declared = {volume["name"] for volume in spec["volumes"]}
        assert {mount["name"] for mount in spec["volumeMounts"]} <= declared


def test_the_pool_the_values_limit_is_the_one_the_assets_use():
    """defaultLimit gives every pool one slot; the assets use one pool, `warehouse`."""
    from workbank_dagster.definitions import defs

    pools = {asset.op.pool for asset in defs.assets if asset.op.pool}
    assert pools == {"warehouse"}
