"""deploy/: the code location's Dockerfile and the values for Dagster's Helm chart, checked statically.

No Docker daemon, no cluster and no chart registry are reachable here, so neither file has been
built or installed: these tests check what can be checked without them. Files present; the image
installs the lock, which holds dagster-postgres and dagster-k8s at the release that goes with its
dagster; everything the image copies exists; the module it serves loads the
definitions; the chart version is the lock's dagster; the values have the keys the deployment
rests on (K8sRunLauncher, the chart's Postgres, the QueuedRunCoordinator, the `warehouse` and
`partitions` pools at one slot, every mounted volume declared). Then a run of `all_assets` is launched through
dagster-k8s's K8sRunLauncher, configured as the chart renders these values, with Kubernetes' batch
API replaced by a recorder: the Job it submits has the code location's image, the settings
ConfigMap and the LLM Secret, the data and sources volumes, and the resources of the values."""

from __future__ import annotations

import re

import yaml
from kubeconfig import kubeconfig_stub

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
    # Nothing parsed or exported at run time: the build writes the manifest with its key (ensure_manifest).
    assert "transform.project import ensure_manifest; ensure_manifest()" in run and "labeling.onnx_model" in run
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


def test_the_pools_the_values_limit_are_the_ones_the_assets_use():
    """defaultLimit gives every pool one slot; the assets use two pools: `warehouse` (the steps
    that write the DuckDB file) and `partitions` (the per-benchmark steps, which write files)."""
    from workbank_dagster.definitions import defs

    pools = {asset.op.pool for asset in defs.assets if asset.op.pool}
    assert pools == {"warehouse", "partitions"}


# --- a run launched through the chart's K8sRunLauncher ---------------------------------------------

RELEASE, NAMESPACE = "workbank", "workbank"  # `helm upgrade --install workbank ... -n workbank` (the values' header)


def chart_run_launcher_config(launcher: dict) -> dict:
    """The K8sRunLauncher config the chart renders into dagster.yaml from `runLauncher.config.k8sRunLauncher`
    (helm/dagster/templates/helpers/instance/_run-launcher.tpl of the chart), for the keys these values use;
    a key the template does not render is refused, so a value that would be silently dropped fails here."""
    rendered = {
        "loadInclusterConfig": ("load_incluster_config", lambda v: v),
        "jobNamespace": ("job_namespace", lambda v: v),
        "imagePullPolicy": ("image_pull_policy", lambda v: v),
        "envConfigMaps": ("env_config_maps", lambda v: [item["name"] for item in v if "name" in item]),
        "envSecrets": ("env_secrets", lambda v: [item["name"] for item in v if "name" in item]),
        "envVars": ("env_vars", lambda v: v),
        "volumeMounts": ("volume_mounts", lambda v: v),
        "volumes": ("volumes", lambda v: v),
        "labels": ("labels", lambda v: v),
        "resources": ("resources", lambda v: v),
        "schedulerName": ("scheduler_name", lambda v: v),
        "securityContext": ("security_context", lambda v: v),
    }
    unknown = sorted(set(launcher) - set(rendered))
    assert not unknown, f"the chart's template does not render {unknown} of runLauncher.config.k8sRunLauncher"
    config = {rendered[key][0]: rendered[key][1](value) for key, value in launcher.items()}
    # What the template always sets, from the release.
    config.setdefault("job_namespace", NAMESPACE)
    return {
        **config,
        "service_account_name": f"{RELEASE}-dagster",
        "dagster_home": "/opt/dagster/dagster_home",
        "instance_config_map": f"{RELEASE}-dagster-instance",
        "postgres_password_secret": f"{RELEASE}-postgresql-secret",
    }


class BatchApiRecorder:
    """Kubernetes' BatchV1Api as the launcher calls it, recording each Job it is asked to create."""

    def __init__(self) -> None:
        self.created: list[tuple[str, object]] = []

    def create_namespaced_job(self, body, namespace, **_):
        self.created.append((namespace, body))
        return body


def test_a_run_launched_through_the_chart_s_k8s_run_launcher_submits_the_job_the_values_describe(tmp_path):
    import dagster as dg
    from dagster._config import process_config
    from dagster._core.code_pointer import ModuleCodePointer
    from dagster._core.launcher import LaunchRunContext
    from dagster._core.origin import JobPythonOrigin, RepositoryPythonOrigin
    from dagster_k8s import K8sRunLauncher

    from workbank_dagster.definitions import defs

    v = values()
    config = chart_run_launcher_config(v["runLauncher"]["config"]["k8sRunLauncher"])
    processed = process_config(K8sRunLauncher.config_type(), config)
    assert processed.success, [error.message for error in processed.errors]
    kubeconfig = kubeconfig_stub(tmp_path / "kubeconfig")  # no cluster: the API client is built, never called
    recorder = BatchApiRecorder()
    launcher = K8sRunLauncher(**{**processed.value, "load_incluster_config": False, "kubeconfig_file": str(kubeconfig)}, k8s_client_batch_api=recorder)
    # The code location's image (the user deployment of the values) is the run's image: the chart
    # gives it to the code server, which puts it in every run's origin.
    deployment = v["dagster-user-deployments"]["deployments"][0]
    image = f"{deployment['image']['repository']}:{deployment['image']['tag']}"
    job = defs.resolve_job_def("all_assets")
    origin = JobPythonOrigin(job.name, RepositoryPythonOrigin("/usr/local/bin/python", ModuleCodePointer("workbank_dagster.definitions", "defs", None), container_image=image))
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home")) as instance:
        launcher.register_instance(instance)
        run = instance.create_run_for_job(job_def=job, job_code_origin=origin)
        launcher.launch_run(LaunchRunContext(dagster_run=run, workspace=None))
        tags = instance.get_run_by_id(run.run_id).tags
    (namespace, submitted), = recorder.created
    assert namespace == NAMESPACE
    pod = submitted.spec.template.spec
    (container,) = pod.containers
    assert container.image == image and tags["dagster/image"] == image
    # The run worker: the code server's interpreter (the origin's) runs `dagster api execute_run`.
    assert container.args[:5] == ["/usr/local/bin/python", "-m", "dagster", "api", "execute_run"]
    assert container.image_pull_policy == "IfNotPresent" and pod.service_account_name == f"{RELEASE}-dagster"
    sources = {(e.config_map_ref.name if e.config_map_ref else None, e.secret_ref.name if e.secret_ref else None) for e in container.env_from}
    assert {("workbank-settings", None), (None, "workbank-llm")} <= sources
    env = {e.name: e.value for e in container.env}
    assert env["DAGSTER_RUN_JOB_NAME"] == "all_assets" and env["DAGSTER_HOME"] == "/opt/dagster/dagster_home"
    mounts = {m.name: m for m in container.volume_mounts}
    volumes = {volume.name: volume for volume in pod.volumes}
    assert mounts["workbank-data"].mount_path == "/data" and not mounts["workbank-data"].read_only
    assert mounts["workbank-sources"].mount_path == "/sources" and mounts["workbank-sources"].read_only
    assert volumes["workbank-data"].persistent_volume_claim.claim_name == "workbank-data"
    assert volumes["workbank-sources"].persistent_volume_claim.read_only
    assert container.resources.requests == {"cpu": "2", "memory": "3Gi"} and container.resources.limits == {"memory": "4Gi"}
    assert submitted.metadata.labels["dagster/job"] == "all_assets" and submitted.metadata.labels["dagster/run-id"] == run.run_id
