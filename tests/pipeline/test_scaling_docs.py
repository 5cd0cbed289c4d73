"""docs/scaling.md: every config snippet is parsed and validated for real, the cost table recomputed.

- `dagster_instance`: Dagster's own instance loader and schema (`dagster_instance_config`), then the
  run coordinator's and run launcher's class config (`K8sRunLauncher.config_type()`), the launcher
  constructed and a run worker Job built from it (volumes, mounts, resources as Kubernetes models).
- `settings_configmap`: a Kubernetes ConfigMap whose keys are settings the code reads.
- `dbt_profile`: dbt's profile loader renders and validates every output with its adapter's
  credentials class; the adapter pins named in the doc agree with dbt-core's.
- `llm_batch_run`: the run config against the LLM asset's op config schema and the executor's.
- the cost table: recomputed from the README's dry-run figures and the judge's own cost function.

Each validator is also run on a broken copy of its snippet, so a broken snippet fails the test.
"""

from __future__ import annotations

import copy
import importlib.metadata
import importlib.util
import inspect
import os
import re
import tomllib
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
import yaml
from doc_blocks import config_block
from kubeconfig import kubeconfig_stub

from workbank_dagster import warehouse
from workbank_dagster.settings import PipelineSettings

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "scaling.md"
PACKAGE = ROOT / "workbank_dagster"
MODELS = ROOT / "dbt_project" / "models"


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def snippet(name: str, text: str | None = None) -> dict:
    """The fenced block right after `<!-- config: name -->` in docs/scaling.md (or `text`), parsed as YAML."""
    return config_block(DOC, name, text)


def pyproject_pins() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return dict(d.split("==", 1) for d in deps if "==" in d)


def package_sources() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py")))


# --- 1. the Dagster instance ----------------------------------------------------------------------


def validate_instance(config: dict, tmp_path: Path) -> dict:
    """What DagsterInstance.from_config does before it builds anything: load and validate dagster.yaml."""
    from dagster._core.instance.config import dagster_instance_config

    home = tmp_path / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text(yaml.safe_dump(config))
    validated, custom_instance_class = dagster_instance_config(str(home))
    assert custom_instance_class is None
    return validated


def validate_class_config(section: dict):
    """A `module`/`class`/`config` entry: import the class, process its config with its config_type()."""
    from dagster._config import process_config
    from dagster._serdes.config_class import class_from_code_pointer

    klass = class_from_code_pointer(section["module"], section["class"])
    result = process_config(klass.config_type(), section.get("config") or {})
    assert result.success, [error.message for error in result.errors]
    return klass, result.value


def build_run_worker_job(launcher_config: dict, tmp_path: Path):
    """Construct the K8sRunLauncher (kubeconfig stub, no cluster) and the Job it would create for a run."""
    from dagster_k8s import K8sRunLauncher
    from dagster_k8s.job import DagsterK8sJobConfig, construct_dagster_k8s_job

    kubeconfig = kubeconfig_stub(tmp_path / "kubeconfig")
    launcher = K8sRunLauncher(**{**launcher_config, "load_incluster_config": False, "kubeconfig_file": str(kubeconfig)})
    fields = inspect.signature(DagsterK8sJobConfig.__new__).parameters
    job_config = DagsterK8sJobConfig(
        **{key: value for key, value in launcher_config.items() if key in fields and key != "job_image"}, job_image="workbank:test"
    )
    job = construct_dagster_k8s_job(
        job_config, args=["dagster", "api", "execute_run"], job_name="dagster-run-test", pod_name="dagster-run-test", component="run_worker"
    )
    return launcher, job


def test_dagster_instance_validates(tmp_path):
    config = snippet("dagster_instance")
    validated = validate_instance(config, tmp_path)
    assert validated["storage"]["postgres"]["postgres_db"]["password"] == {"env": "DAGSTER_PG_PASSWORD"}
    from dagster._core.run_coordinator import QueuedRunCoordinator

    coordinator, _ = validate_class_config(config["run_coordinator"])
    assert coordinator is QueuedRunCoordinator
    # The pool claims of the doc: one limit for every pool, enforced before a run pod starts.
    assert config["concurrency"]["pools"] == {"default_limit": 1, "granularity": "run"}
    assert config["run_monitoring"]["enabled"] is True


def test_the_pools_in_the_code_are_the_docs():
    """The doc's `default_limit: 1  # the pools here are warehouse and partitions` holds only if no other pool exists."""
    from workbank_dagster.definitions import defs

    pools = {asset.op.pool for asset in defs.assets if asset.op.pool}
    assert pools == {"warehouse", "partitions"}
    assert "# the pools here are `warehouse` and `partitions`" in doc_text()


def test_k8s_run_launcher_config(tmp_path):
    pytest.importorskip("dagster_k8s")
    config = snippet("dagster_instance")
    section = config["run_launcher"]
    assert (section["module"], section["class"]) == ("dagster_k8s", "K8sRunLauncher")
    klass, value = validate_class_config(section)
    launcher, job = build_run_worker_job(value, tmp_path)
    assert isinstance(launcher, klass) and launcher.job_namespace == "workbank"
    pod = job.spec.template.spec
    container = pod.containers[0]
    mounts = {m.name: m for m in container.volume_mounts}
    volumes = {v.name: v for v in pod.volumes}
    assert set(mounts) <= set(volumes), "every volume mount needs a volume"
    assert set(value["env_config_maps"]) == {"workbank-settings"}
    assert container.resources.limits["memory"] and container.resources.requests["memory"]
    # The warehouse volume is written; the sources volume is mounted read-only.
    assert not mounts["workbank-data"].read_only and mounts["workbank-sources"].read_only
    assert volumes["workbank-data"].persistent_volume_claim.claim_name == "workbank-data"


def dbt_reads_target_from(variable: str) -> bool:
    """dbt-core's `--target` option takes its value from `variable` (read from source: importing the CLI is slow)."""
    from dbt_common.constants import ENGINE_ENV_PREFIX

    # find_spec("dbt.cli.params") would import dbt.cli; `dbt` is a namespace package shared by dbt-core and the adapters.
    (params_py,) = [p for p in map(Path, importlib.util.find_spec("dbt").submodule_search_locations) if (p / "cli" / "params.py").is_file()]
    params = (params_py / "cli" / "params.py").read_text()
    option = re.search(r'target = _create_option_and_track_env_var\(\s*"--target",\s*"-t",\s*envvar="([A-Z_]+)"', params)
    # dbt 1.11 also accepts DBT_ENGINE_<name> for every DBT_<name> option variable (EngineEnvVar).
    return bool(option) and option.group(1) == variable and ENGINE_ENV_PREFIX == "DBT_ENGINE"


def test_settings_configmap(tmp_path):
    pytest.importorskip("dagster_k8s")
    import kubernetes as k8s
    from dagster_k8s.models import k8s_model_from_dict, k8s_snake_case_dict

    configmap = snippet("settings_configmap")
    model = k8s_model_from_dict(k8s.client.V1ConfigMap, k8s_snake_case_dict(k8s.client.V1ConfigMap, configmap))
    assert model.kind == "ConfigMap" and model.metadata.name == "workbank-settings"
    data = configmap["data"]
    assert all(isinstance(v, str) for v in data.values()), "ConfigMap values must be strings"
    from workbank_dagster.environment import environment_variable
    from workbank_dagster.labeling.chat_model import ChatModelResource, chat_model_variable
    from workbank_dagster.settings import FIELDS

    sources = package_sources()
    # The resources' fields are read from WORKBANK_<FIELD> (settings.environment_variable); anything
    # else the code reads by name.
    read = {environment_variable(name) for name in FIELDS} | {chat_model_variable(name) for name in [*ChatModelResource.model_fields, "api_key_env"]}
    for key in data:
        if key.startswith("WORKBANK_"):
            assert key in read or f'"{key}"' in sources, f"{key} is not a setting the code reads"
    assert {k for k in data if not k.startswith("WORKBANK_")} == {"DBT_TARGET"}
    assert dbt_reads_target_from("DBT_TARGET")
    assert data["DBT_TARGET"] in snippet("dbt_profile")["workbank"]["outputs"]
    # The folders the settings name are inside the run pod's volumes.
    launcher = snippet("dagster_instance")["run_launcher"]["config"]
    mount_paths = {m["name"]: m["mountPath"] for m in launcher["volume_mounts"]}
    assert Path(data["WORKBANK_DATA_DIR"]).is_relative_to(mount_paths["workbank-data"])
    assert Path(data["WORKBANK_SOURCE_DIR"]).is_relative_to(mount_paths["workbank-sources"])


def test_broken_instance_snippets_fail(tmp_path):
    from dagster._core.errors import DagsterInvalidConfigError

    config = snippet("dagster_instance")
    per_pool = copy.deepcopy(config)
    per_pool["concurrency"]["pools"]["warehouse"] = 1  # per-pool limits are not instance config
    with pytest.raises(DagsterInvalidConfigError):
        validate_instance(per_pool, tmp_path)
    conflicting = copy.deepcopy(config)
    conflicting["run_coordinator"]["config"] = {"max_concurrent_runs": 1}  # also set under concurrency.runs
    with pytest.raises(DagsterInvalidConfigError):
        validate_instance(conflicting, tmp_path)
    old_alias = copy.deepcopy(config["run_coordinator"])
    old_alias["module"] = "dagster.core.run_coordinator"
    with pytest.raises(Exception, match="Couldn't import module"):
        validate_class_config(old_alias)
    if importlib.util.find_spec("dagster_k8s") is None:
        return
    typo = copy.deepcopy(config["run_launcher"])
    typo["config"]["job_namspace"] = typo["config"].pop("job_namespace")
    with pytest.raises(AssertionError):
        validate_class_config(typo)
    _, value = validate_class_config(config["run_launcher"])
    value["volume_mounts"] = [{"name": "workbank-data", "mount_path_typo": "/data"}]
    with pytest.raises(Exception, match="Unexpected keys"):
        build_run_worker_job(value, tmp_path)


# --- 2. the dbt profile ---------------------------------------------------------------------------

FAKE_ENV = {"WORKBANK_PG_HOST": "db.example.internal", "WORKBANK_PG_USER": "workbank", "DBT_ENV_SECRET_PG_PASSWORD": "not-a-real-password"}
# The local output's variables (no default in profiles.yml: the pipeline always passes them).
LOCAL_ENV = {"WORKBANK_DUCKDB_PATH": "/tmp/workbank-profile-test.duckdb", "WORKBANK_PARTITIONS_DIR": "/tmp/workbank-profile-test-partitions"}
REQUIRED_FIELDS = {"duckdb": {"type", "path"}, "postgres": {"type", "host", "user", "password", "port", "dbname", "schema"}}


def load_dbt_profile(raw: dict, target: str, env: dict | None = None):
    """dbt's own loader: render env_var(), pick the target, validate with the adapter's credentials class."""
    from argparse import Namespace

    from dbt.config.profile import Profile
    from dbt.config.renderer import ProfileRenderer
    from dbt.flags import set_from_args
    from dbt_common.context import set_invocation_context

    set_invocation_context({**os.environ, **LOCAL_ENV, **FAKE_ENV} if env is None else env)
    set_from_args(Namespace(), None)
    (name,) = raw
    return Profile.from_raw_profiles(raw, name, ProfileRenderer({}), target_override=target)


def test_dbt_profile_matches_the_repository():
    doc = snippet("dbt_profile")
    repo = yaml.safe_load((ROOT / "dbt_project" / "profiles.yml").read_text())
    project = yaml.safe_load((ROOT / "dbt_project" / "dbt_project.yml").read_text())
    assert set(doc) == set(repo) == {project["profile"]}
    name = project["profile"]
    # The doc adds an output; the default target and the embedded output stay as they are.
    assert doc[name]["target"] == repo[name]["target"] == "local"
    for output, fields in repo[name]["outputs"].items():
        assert doc[name]["outputs"][output] == fields
    # "No WORKBANK_* setting chooses a target": checked on what the pipeline actually builds, not its source text.
    from workbank_dagster.definitions import defs
    from workbank_dagster.transform.project import dbt_build_args, dbt_project

    check_no_dbt_target(defs.resources["dbt"], dbt_project, dbt_build_args(PipelineSettings.from_env().resolve()))


def check_no_dbt_target(resource, project, args: list[str]) -> None:
    """dbt runs the profile's own target: neither the resource, the project nor the build's arguments choose one."""
    assert getattr(resource, "target", None) is None, "DbtCli(...) now sets a target: update docs/scaling.md §2"
    assert getattr(project, "target", None) is None, "DbtProject(...) now sets a target: update docs/scaling.md §2"
    assert "--target" not in args and "-t" not in args, f"the build passes a target: {args}"


def test_no_dbt_target_whatever_the_settings(monkeypatch):
    from workbank_dagster.definitions import defs
    from workbank_dagster.transform.project import DbtCli, dbt_build_args, dbt_executable, dbt_project

    for name, value in (("WORKBANK_COVERAGE_THRESHOLD", "3"), ("WORKBANK_ACTIVE_LABELER", "llm:m:t2"), ("WORKBANK_CLUSTER_LEVEL", "minor")):
        monkeypatch.setenv(name, value)
        check_no_dbt_target(defs.resources["dbt"], dbt_project, dbt_build_args(PipelineSettings.from_env().resolve()))
    # The check can fail: a resource or arguments that choose the shared target.
    with pytest.raises(AssertionError):
        check_no_dbt_target(DbtCli(project_dir=dbt_project, dbt_executable=dbt_executable(), target="shared"), dbt_project, dbt_build_args(PipelineSettings.from_env().resolve()))
    with pytest.raises(AssertionError):
        check_no_dbt_target(defs.resources["dbt"], dbt_project, [*dbt_build_args(PipelineSettings.from_env().resolve()), "--target", "shared"])


def test_dbt_profile_outputs_validate():
    raw = snippet("dbt_profile")
    outputs = raw["workbank"]["outputs"]
    for target, output in outputs.items():
        assert REQUIRED_FIELDS[output["type"]] <= set(output), f"{target}: missing {REQUIRED_FIELDS[output['type']] - set(output)}"
        if importlib.util.find_spec(f"dbt.adapters.{output['type']}") is None:
            continue  # the adapter is not installed here: the structural check above is all we can do
        profile = load_dbt_profile(raw, target)
        assert profile.target_name == target and profile.credentials.type == output["type"]
        assert profile.threads == output["threads"]
        if output["type"] == "postgres":
            assert profile.credentials.host == FAKE_ENV["WORKBANK_PG_HOST"]
            assert profile.credentials.database == output["dbname"]
    # `make run` (target local) must not need the shared output's variables: dbt renders only the target's output.
    without = {**{k: v for k, v in os.environ.items() if k not in FAKE_ENV}, **LOCAL_ENV}
    assert load_dbt_profile(raw, "local", env=without).credentials.type == "duckdb"


def test_the_warehouse_path_has_no_default_in_the_dbt_profile(tmp_path):
    """The warehouse path is said once (pipeline_settings.duckdb_path), and so is the partition
    files' folder (pipeline_settings.partitions_dir): the profile reads each from the environment
    with no default of its own, so a dbt command not given them fails instead of building some
    other file, or reading some other folder."""
    from dbt.exceptions import EnvVarMissingError

    raw = yaml.safe_load((ROOT / "dbt_project" / "profiles.yml").read_text())
    env = {k: v for k, v in os.environ.items() if k not in LOCAL_ENV}
    with pytest.raises(EnvVarMissingError, match="WORKBANK_DUCKDB_PATH"):
        load_dbt_profile(raw, "local", env={**env, "WORKBANK_PARTITIONS_DIR": str(tmp_path)})
    with pytest.raises(EnvVarMissingError, match="WORKBANK_PARTITIONS_DIR"):
        load_dbt_profile(raw, "local", env={**env, "WORKBANK_DUCKDB_PATH": str(tmp_path / "w.duckdb")})
    given = str(tmp_path / "w.duckdb")
    profile = load_dbt_profile(raw, "local", env={**env, "WORKBANK_DUCKDB_PATH": given, "WORKBANK_PARTITIONS_DIR": str(tmp_path / "p")})
    assert profile.credentials.path == given
    assert profile.credentials.settings == {"file_search_path": str(tmp_path / "p"), "memory_limit": warehouse.MEMORY_LIMIT}


def test_each_run_gives_dbt_a_profile_written_for_its_warehouse(tmp_path):
    """No environment: the dbt resource of a run reads a profiles folder whose profile names the
    run's warehouse and partition files (transform/project.py `dbt_for`), as dbt itself loads it,
    with no WORKBANK_* variable set; every other value is the committed template's."""
    from workbank_dagster.definitions import defs
    from workbank_dagster.transform.project import dbt_for, profiles_dir_for

    settings = PipelineSettings.of(data_dir=str(tmp_path), partitions_dir=str(tmp_path / "parts")).resolve()
    env = {k: v for k, v in os.environ.items() if k not in LOCAL_ENV}
    given = defs.resources["dbt"]
    run_dbt = dbt_for(given, settings, tmp_path / "run.duckdb")
    folder = Path(run_dbt.profiles_dir)
    assert folder.parent == tmp_path / "dbt_profiles"
    assert {name: getattr(run_dbt, name) for name in type(given).model_fields if name != "profiles_dir"} == {
        name: getattr(given, name) for name in type(given).model_fields if name != "profiles_dir"
    }
    raw = yaml.safe_load((folder / "profiles.yml").read_text())
    profile = load_dbt_profile(raw, "local", env=env)
    assert profile.credentials.path == str(tmp_path / "run.duckdb")
    assert profile.credentials.settings == {"file_search_path": str(tmp_path / "parts"), "memory_limit": warehouse.MEMORY_LIMIT}
    template = yaml.safe_load((ROOT / "dbt_project" / "profiles.yml").read_text())
    template["workbank"]["outputs"]["local"]["path"] = str(tmp_path / "run.duckdb")
    template["workbank"]["outputs"]["local"]["settings"]["file_search_path"] = str(tmp_path / "parts")
    assert raw == template
    # Another warehouse, another folder; the same one, the same folder, written once.
    assert profiles_dir_for(settings, tmp_path / "other.duckdb") != folder
    assert profiles_dir_for(settings, tmp_path / "run.duckdb") == folder
    # With docs/scaling.md's shared output added, its env_var()s stay for dbt to read at run time.
    from workbank_dagster.transform.project import rendered_profile

    with_shared = yaml.safe_load(rendered_profile(tmp_path / "w.duckdb", tmp_path, template=yaml.safe_dump(snippet("dbt_profile"))))
    assert with_shared["workbank"]["outputs"]["local"]["path"] == str(tmp_path / "w.duckdb")
    assert {k: v for k, v in with_shared["workbank"]["outputs"].items() if k != "local"} == {
        k: v for k, v in snippet("dbt_profile")["workbank"]["outputs"].items() if k != "local"
    }
    assert "env_var('WORKBANK_PG_HOST')" in str(with_shared)


def test_broken_dbt_profile_fails():
    if importlib.util.find_spec("dbt.adapters.postgres") is None:
        pytest.skip("dbt-postgres not installed")
    from dbt.exceptions import DbtProfileError

    raw = snippet("dbt_profile")
    broken = copy.deepcopy(raw)
    broken["workbank"]["outputs"]["shared"]["dbnme"] = broken["workbank"]["outputs"]["shared"].pop("dbname")
    with pytest.raises(DbtProfileError):
        load_dbt_profile(broken, "shared")
    with pytest.raises(DbtProfileError):
        load_dbt_profile(raw, "no-such-target")


def test_pins_named_in_the_doc():
    text = doc_text()
    named = dict(re.findall(r"`((?:dbt|dagster)-[a-z0-9-]+)==(\d+\.\d+)\.\*`", text))
    pins = pyproject_pins()
    core = pins["dbt-core"].removesuffix(".*")
    assert named["dbt-core"] == core
    assert named["dbt-postgres"] == core, "a dbt adapter's minor version follows dbt-core's"
    assert named["dbt-duckdb"] == pins["dbt-duckdb"].removesuffix(".*") == core
    libraries = pins["dagster-dbt"].removesuffix(".*")
    assert named["dagster-k8s"] == named["dagster-postgres"] == libraries, "Dagster libraries share one version line"
    locked = dict(line.split("==", 1) for line in (ROOT / "requirements.lock").read_text().split() if "==" in line)
    assert f"dbt-core {locked['dbt-core']}" in text, "the doc names the locked dbt-core"
    for dist, line in [("dbt-postgres", core), ("dagster-k8s", libraries)]:
        try:
            installed = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        assert installed.startswith(line + "."), f"{dist} {installed} installed, the doc pins {line}.*"
    if importlib.util.find_spec("dbt.adapters.postgres") is not None:
        from packaging.requirements import Requirement

        requires = {r.name: r for r in map(Requirement, importlib.metadata.requires("dbt-postgres") or [])}
        assert requires["dbt-core"].specifier.contains(importlib.metadata.version("dbt-core"))
        assert requires["dbt-adapters"].specifier.contains(importlib.metadata.version("dbt-adapters"))


# --- the SQL portability table --------------------------------------------------------------------

DUCKDB_ONLY = {  # pattern -> the models the doc names for it
    r"::double\b": None,  # counted: "10 staging/intermediate/mart models"
    r"'double'": set(),  # the macro typed_table casts to 'double precision', which Postgres has too
    r"\bmedian\(": {"int_task_time_shares"},
    r"\bany_value\(": {"fct_occupation_coverage"},
    r"\bunnest\(\[": {"fct_work_time_coverage"},
}


def models_matching(pattern: str) -> set[str]:
    """The models and macros whose SQL matches `pattern`, by file name."""
    files = [*MODELS.rglob("*.sql"), *(MODELS.parent / "macros").glob("*.sql")]
    return {p.stem for p in files if re.search(pattern, p.read_text(), re.IGNORECASE)}


def test_duckdb_only_sql_table_is_current():
    text = doc_text()
    for pattern, named in DUCKDB_ONLY.items():
        found = models_matching(pattern)
        if named is None:
            (count,) = re.findall(r"(\d+) staging/intermediate/mart models", text)
            assert len(found) == int(count), f"{pattern}: {sorted(found)}"
        else:
            assert found == named, f"{pattern}: found in {sorted(found)}"
            assert all(f"`{model}`" in text for model in named)


def test_portable_forms_run_on_duckdb():
    import duckdb

    con = duckdb.connect()
    row = con.execute(
        "select cast('1.5' as double precision), percentile_cont(0.5) within group (order by x), median(x), max(x) "
        "from (values (1.0), (2.0), (4.0), (10.0)) as t(x)"
    ).fetchone()
    assert row[0] == 1.5 and float(row[1]) == float(row[2]) == 3.0 and float(row[3]) == 10.0
    assert [r[0] for r in con.execute("select unnest(array[1, 3, 5, 10])").fetchall()] == [1, 3, 5, 10]


# --- 3. the LLM batch run config and the cost model -----------------------------------------------


def test_llm_batch_run_config():
    import dagster as dg
    from dagster._config import validate_config

    from workbank_dagster.labeling.judge_assets import llm_judge_labels

    run_config = snippet("llm_batch_run")
    (op_name,) = run_config["ops"]
    assert op_name == llm_judge_labels.op.name
    op_config = run_config["ops"][op_name]["config"]
    assert validate_config(llm_judge_labels.op.config_schema.config_type, op_config).success
    assert op_config["mode"] == "batch"
    assert validate_config(dg.multi_or_in_process_executor.config_schema.config_type, run_config["execution"]["config"]).success
    assert not validate_config(llm_judge_labels.op.config_schema.config_type, {**op_config, "max_wait": 60}).success


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def measured_figures() -> dict:
    """The dry run's figures as docs/labeling.md states them."""
    readme = (ROOT / "docs" / "labeling.md").read_text(encoding="utf-8")
    readme = re.sub(r"\s+", " ", readme)
    match = re.search(
        r"([\d,]+) distinct requests\) estimates ([\d.]+) M prompt tokens.*?([\d.]+) M completion tokens: "
        r"\$([\d.]+) at the default gpt-4o-mini prices \(\$([\d.]+) / \$([\d.]+) per million\), \$([\d.]+) with the Batch",
        readme,
    )
    assert match, "docs/labeling.md no longer states the estimate-llm dry run as this test expects"
    requests, prompt_m, completion_m, sync, p_in, p_out, batch = match.groups()
    return {
        "requests": int(_number(requests)),
        "prompt_tokens": _number(prompt_m) * 1e6,
        "completion_tokens": _number(completion_m) * 1e6,
        "sync": Decimal(sync),
        "batch": Decimal(batch),
        "p_in": float(p_in),
        "p_out": float(p_out),
    }


def model_parameters(text: str) -> dict:
    t_in = re.search(r"`t_in ≈ ([\d,]+)`", text)
    t_out = re.search(r"`t_out = (\d+)`", text)
    prices = re.search(r"`p_in = ([\d.]+)`, `p_out = ([\d.]+)`", text)
    discount = re.search(r"`d = 1` sync, `([\d.]+)` with the Batch API", text)
    assert t_in and t_out and prices and discount, "the cost model's parameters are not where the test looks"
    return {
        "t_in": _number(t_in.group(1)),
        "t_out": _number(t_out.group(1)),
        "p_in": float(prices.group(1)),
        "p_out": float(prices.group(2)),
        "d": float(discount.group(1)),
    }


def cost_table(text: str) -> list[dict]:
    block = text.split("<!-- cost-table -->", 1)[1].strip().splitlines()
    rows = []
    for line in block[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        requests, prompt, completion, sync, batch = cells
        rows.append(
            {
                "requests": int(_number(requests.split()[0])),
                "measured": "measured" in requests,
                "prompt_tokens": _number(prompt.removesuffix(" M")) * 1e6,
                "completion_tokens": _number(completion.removesuffix(" M")) * 1e6,
                "sync": Decimal(sync.removeprefix("$").replace(",", "")),
                "batch": Decimal(batch.removeprefix("$").replace(",", "")),
            }
        )
    assert rows, "no cost table after <!-- cost-table -->"
    return rows


def cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def check_cost_table(text: str) -> None:
    from workbank_dagster.labeling.chat_model import LLMSettings
    from workbank_dagster.labeling.llm_protocol import EXPECTED_COMPLETION_TOKENS

    settings = LLMSettings()
    measured = measured_figures()
    params = model_parameters(text)
    # The parameters are the code's defaults and the README's dry run, not numbers of the doc's own.
    assert (
        (params["p_in"], params["p_out"])
        == (settings.input_usd_per_mtok, settings.output_usd_per_mtok)
        == (measured["p_in"], measured["p_out"])
    )
    assert params["d"] == settings.batch_discount
    assert params["t_out"] == EXPECTED_COMPLETION_TOKENS
    assert abs(params["t_out"] * measured["requests"] - measured["completion_tokens"]) <= 0.005e6  # 0.28 M, rounded
    assert abs(params["t_in"] - measured["prompt_tokens"] / measured["requests"]) <= 10  # 12.16 M / 7,112, rounded to tens
    assert cents(Decimal(repr(settings.cost(measured["prompt_tokens"], measured["completion_tokens"])))) == measured["sync"]
    assert cents(Decimal(repr(settings.cost(measured["prompt_tokens"], measured["completion_tokens"], batch=True)))) == measured["batch"]
    rows = cost_table(text)
    assert [r["requests"] for r in rows if not r["measured"]] == [10_000, 100_000, 1_000_000]
    for row in rows:
        n = row["requests"]
        if row["measured"]:
            assert (n, row["prompt_tokens"], row["completion_tokens"]) == (
                measured["requests"],
                measured["prompt_tokens"],
                measured["completion_tokens"],
            )
            tokens_in, tokens_out = measured["prompt_tokens"], measured["completion_tokens"]
        else:
            tokens_in, tokens_out = n * params["t_in"], n * params["t_out"]
            assert (row["prompt_tokens"], row["completion_tokens"]) == (tokens_in, tokens_out), f"{n}: tokens"
        for mode, discount in (("sync", 1.0), ("batch", params["d"])):
            exact = (
                (Decimal(repr(tokens_in)) * Decimal(repr(params["p_in"])) + Decimal(repr(tokens_out)) * Decimal(repr(params["p_out"])))
                / Decimal(10**6)
                * Decimal(repr(discount))
            )
            assert float(exact) == pytest.approx(settings.cost(tokens_in, tokens_out, batch=mode == "batch"), rel=1e-12)
            assert row[mode] == cents(exact), f"{n} requests, {mode}: the doc says ${row[mode]}, the formula gives ${cents(exact)}"


def test_cost_table_recomputes():
    check_cost_table(doc_text())


def test_broken_cost_table_fails():
    text = doc_text()
    for broken in (re.sub(r"\| \$28\.\d\d \|", "| $27.00 |", text), re.sub(r"`t_in ≈ [\d,]+`", "`t_in ≈ 1,200`", text)):
        assert broken != text  # the doc still has what this breaks
        with pytest.raises(AssertionError):
            check_cost_table(broken)
