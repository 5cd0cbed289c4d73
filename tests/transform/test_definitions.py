"""The Definitions load and have the shape the issues promise (groups, keys, checks, jobs, automation)."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from workbank_dagster.automation import LLM_ASSETS, PARTITION_KEYS
from workbank_dagster.definitions import defs
from workbank_dagster.settings import PipelineSettings
from workbank_dagster.transform.project import dbt_build_args

MARTS = ["dim_task", "dim_occupation", "fct_prompt_task_labels", "fct_task_coverage", "fct_occupation_coverage", "fct_family_coverage", "fct_work_time_coverage"]


def _graph():
    return defs.resolve_asset_graph()


def test_definitions_validate():
    dg.Definitions.validate_loadable(defs)


GROUPS = {"sources", "labeling", "transform", "analysis", "report"}


def check_groups(groups: set) -> None:
    assert groups == GROUPS, f"missing {sorted(GROUPS - groups)}, unexpected {sorted(groups - GROUPS)}"


def test_every_group_present_and_every_asset_grouped():
    graph = _graph()
    groups = {graph.get(key).group_name for key in graph.materializable_asset_keys}
    check_groups(groups)
    # The check can fail: a group gone (the old `| ({"analysis"} & groups)` let `analysis` vanish), or one too many.
    with pytest.raises(AssertionError):
        check_groups(groups - {"analysis"})
    with pytest.raises(AssertionError):
        check_groups(groups | {"default"})


def test_marts_and_raw_tables_are_assets_with_lineage():
    graph = _graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    for mart in MARTS:
        assert f"marts/{mart}" in keys
    assert "raw/benchmark_prompts" in keys and "labeling/embedded_labels" in keys and "labeling/llm_labels" in keys
    # dbt sources resolve to the Python assets that write them: raw -> staging -> marts -> report.
    parents = graph.get(dg.AssetKey(["staging", "stg_benchmarks__prompts"])).parent_keys
    assert dg.AssetKey(["raw", "benchmark_prompts"]) in parents
    assert dg.AssetKey(["marts", "fct_task_coverage"]) in graph.get(dg.AssetKey(["report", "headline"])).parent_keys
    # Labeling's tables enter dbt through staging, one model per table (the only models that read source()).
    assert dg.AssetKey(["labeling", "embedded_labels"]) in graph.get(dg.AssetKey(["staging", "stg_labeling__embedded_labels"])).parent_keys
    assert graph.get(dg.AssetKey(["marts", "fct_prompt_task_labels_all_labelers"])).parent_keys == {
        dg.AssetKey(["staging", "stg_labeling__embedded_labels"]),
        dg.AssetKey(["staging", "stg_labeling__llm_labels"]),
    }


def test_dbt_tests_are_asset_checks():
    checks = list(_graph().asset_check_keys)
    names = {c.name for c in checks}
    assert len(checks) >= 30
    assert "assert_time_shares_sum_to_one" in names
    assert any(c.asset_key == dg.AssetKey(["marts", "dim_task"]) and c.name.startswith("unique_dim_task_task_id") for c in checks)


def test_partitioned_assets_use_benchmarks_partitions_and_single_run_backfills():
    graph = _graph()
    for key in PARTITION_KEYS:
        node = graph.get(dg.AssetKey(key))
        assert isinstance(node.partitions_def, dg.DynamicPartitionsDefinition)
        assert node.partitions_def.name == "benchmarks"
        assert node.backfill_policy == dg.BackfillPolicy.single_run()


def test_the_partition_job_selects_every_benchmark_partitioned_asset_but_the_llm_judge_s():
    """automation.PARTITION_KEYS is written out by hand: an asset partitioned by benchmark that it
    misses would never be built by job benchmark_partitions, the sensor or a backfill."""
    graph = _graph()
    partitioned = {
        key for key in graph.get_all_asset_keys()
        if graph.get(key).is_materializable and graph.get(key).partitions_def is not None and graph.get(key).partitions_def.name == "benchmarks"
    }
    llm = LLM_ASSETS.resolve(graph)
    assert llm and llm <= partitioned
    assert {dg.AssetKey(key) for key in PARTITION_KEYS} == partitioned - llm


def test_partitioned_steps_stay_out_of_the_warehouse_pool():
    """#18: a per-benchmark step writes its own files and never opens the warehouse, so it is in pool
    `partitions`; every unpartitioned step that touches the warehouse is in pool `warehouse`."""
    pools = {}
    for assets_def in defs.assets:
        if not isinstance(assets_def, dg.AssetsDefinition) or not assets_def.is_executable:
            continue
        if any(k.path[0] in ("files",) for k in assets_def.keys):
            continue
        expected = "partitions" if assets_def.partitions_def is not None and assets_def.partitions_def.name == "benchmarks" else "warehouse"
        pools[assets_def.op.name] = (assets_def.op.pool, expected)
    assert {name for name, (pool, _) in pools.items() if pool == "partitions"} == {
        "raw__benchmark_prompts", "raw__benchmark_results", "raw__benchmark_instructions", "embedded_judge_labels", "llm_judge_labels"
    }
    assert {name: pool for name, (pool, expected) in pools.items() if pool != expected} == {}


def test_jobs_sensor_and_schedule():
    assert defs.resolve_job_def("all_assets") is not None
    assert defs.resolve_job_def("benchmark_partitions") is not None and defs.resolve_job_def("warehouse") is not None
    assert defs.resolve_sensor_def("benchmark_files_sensor") is not None
    assert defs.resolve_sensor_def("warehouse_after_partitions") is not None
    assert defs.resolve_schedule_def("weekly_refresh").cron_schedule == "0 5 * * 1"


def test_dbt_build_args_carry_settings(monkeypatch):
    monkeypatch.setenv("WORKBANK_COVERAGE_THRESHOLD", "3")
    monkeypatch.setenv("WORKBANK_ACTIVE_LABELER", "llm:gpt-x:v2")
    args = dbt_build_args(PipelineSettings.from_env().resolve())
    assert args[:2] == ["build", "--vars"]
    variables = json.loads(args[2])
    assert variables["coverage_threshold"] == 3 and variables["active_labeler"] == "llm:gpt-x:v2"
    assert dbt_build_args(PipelineSettings.from_env().resolve(), select="marts")[-2:] == ["--select", "marts"]
    assert args[3:5] == ["--exclude-resource-type", "unit_test"]  # make run leaves the dbt unit tests to make test


def test_llm_judge_runs_only_in_its_own_job():
    llm = {dg.AssetKey(["labeling", "llm_labels"]), dg.AssetKey(["labeling", "llm_judgements"])}
    everything = defs.resolve_job_def("all_assets").asset_layer.selected_asset_keys
    refresh = defs.resolve_job_def("benchmark_partitions").asset_layer.selected_asset_keys | defs.resolve_job_def("warehouse").asset_layer.selected_asset_keys
    llm_job = defs.resolve_job_def("llm_labeling").asset_layer.selected_asset_keys
    assert not (llm & everything) and not (llm & refresh)
    assert llm <= llm_job and dg.AssetKey(["labeling", "judge_validation"]) in llm_job


def test_dbt_resource_skips_only_what_it_says_it_skips():
    """`DbtCli` overrides two private members of dagster-dbt: they must still exist (an upgrade that
    renames them would silently bring back the cost), and the version it reports without running
    `dbt --version` must be the one that command prints."""
    import re
    import subprocess

    from dagster_dbt import DbtCliResource

    from workbank_dagster.transform.project import DbtCli, dbt_executable, dbt_project

    assert callable(getattr(DbtCliResource, "_initialize_dbt_core_adapter", None))
    assert hasattr(DbtCliResource._cli_version, "func")  # still a cached_property
    resource = defs.resources["dbt"]
    assert isinstance(resource, DbtCli)
    printed = subprocess.run([dbt_executable(), "--version"], capture_output=True, text=True, check=True).stdout
    installed = re.search(r"installed:\s*(\d+\.\d+\.\d+)", printed) or re.search(r"(\d+\.\d+\.\d+)", printed)
    assert str(resource._cli_version) == installed.group(1)
    assert resource._initialize_dbt_core_adapter(["build"]) is None
    assert str(DbtCli(project_dir=dbt_project, dbt_executable=dbt_executable())._cli_version).startswith("1.11.")


def test_old_dbt_build_folders_are_pruned_but_recent_ones_kept(tmp_path):
    import os
    import time

    from workbank_dagster.transform.project import prune_build_dirs

    now = time.time()
    folders = {}
    for i, age in enumerate([0, 3600, 7200, 10800, 14400, 60]):
        path = tmp_path / f"dbt_models-run{i}-abc{i}"
        path.mkdir()
        (path / "manifest.json").write_text("{}")
        os.utime(path, (now - age, now - age))
        folders[i] = path
    (tmp_path / "docs").mkdir()  # not a build folder
    (tmp_path / "partial_parse.msgpack").write_text("")
    removed = prune_build_dirs(folders[0], keep=3, min_age_s=600)
    # Kept: the current one, the two newest others (60 s and 1 h old); removed: the older three.
    assert sorted(removed) == sorted([folders[2], folders[3], folders[4]])
    assert all(folders[i].exists() for i in (0, 1, 5)) and (tmp_path / "docs").exists()
    # Nothing younger than min_age_s is removed, however many there are.
    assert prune_build_dirs(folders[0], keep=1, min_age_s=600) == [folders[1]]
    assert folders[5].exists()


def test_a_warehouses_own_build_folder_stays_while_its_profiles_folder_does(tmp_path):
    """A warehouse's build folder (`build_dir_for`, marked by `mark_build_dir`) holds the partial
    parse its next build reads: it stays, however old, while that warehouse's profiles folder
    exists, and goes with it. Under the age rule alone it went once three other warehouses had
    built in the last ten minutes (seen on the growth bench's workspace after a test session)."""
    import os
    import time

    from workbank_dagster.transform.project import PROFILES_MARKER, prune_build_dirs

    old = time.time() - 86_400
    folders = {}
    for name in ("current", "kept", "gone", "unmarked"):
        path = tmp_path / "target" / f"dbt_models-{name}"
        path.mkdir(parents=True)
        if name != "unmarked":
            profiles = tmp_path / "data" / name
            (profiles if name != "gone" else tmp_path / "elsewhere").mkdir(parents=True)
            (path / PROFILES_MARKER).write_text(str(profiles))
        os.utime(path, (old, old))
        folders[name] = path
    assert sorted(prune_build_dirs(folders["current"], keep=1, min_age_s=600)) == sorted([folders["gone"], folders["unmarked"]])
    assert folders["kept"].exists() and folders["current"].exists()


def _manifest() -> dict:
    from workbank_dagster.transform.project import ensure_manifest

    return json.loads(ensure_manifest().read_text())


def test_dbt_project_vars_are_the_settings_defaults():
    """dbt_project.yml keeps its vars for `make docs` only: they equal the defaults the pipeline
    passes with --vars, every one of them (the sensitivity thresholds once reached dbt only from
    the yml, so a configured list never did)."""
    import yaml

    from workbank_dagster.settings import DBT_PROJECT_DIR

    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    assert project["vars"] == PipelineSettings.of().resolve().dbt_vars  # the fields' defaults, whatever the environment says


def test_every_model_and_macro_is_described_owned_and_every_mart_contracted():
    manifest = _manifest()
    models = [n for n in manifest["nodes"].values() if n["resource_type"] == "model"]
    assert len(models) >= 43  # 43 since the six staging models nothing read went
    assert [n["name"] for n in models if not n.get("description")] == []
    assert {(n["config"].get("meta") or {}).get("owner") for n in models} == {"team:analytics-engineering"}
    marts = [n for n in models if n["config"].get("schema") == "marts"]
    assert len(marts) >= 19 and all(n["config"]["contract"]["enforced"] for n in marts)
    assert all(v.get("data_type") for n in marts for v in n["columns"].values())
    macros = [m for m in manifest["macros"].values() if m["package_name"] == "workbank"]
    assert macros and [m["name"] for m in macros if not m.get("description")] == []
    # The Dagster assets of the models carry the same owner.
    graph = _graph()
    for node in models:
        key = dg.AssetKey([node["config"].get("schema") or node["schema"], node["name"]])
        assert graph.get(key).owners == [node["config"]["meta"]["owner"]], key


def test_only_staging_reads_sources():
    """jaffle-shop's layering: a source enters through its staging model; intermediate models, marts
    and macros read refs only."""
    import re

    from workbank_dagster.settings import DBT_PROJECT_DIR

    def code(path) -> str:  # without SQL and Jinja comments
        return re.sub(r"--[^\n]*", "", re.sub(r"\{#.*?#\}", "", path.read_text(), flags=re.S))

    readers = sorted(
        path.relative_to(DBT_PROJECT_DIR).as_posix()
        for folder in ("models/intermediate", "models/marts", "macros")
        for path in (DBT_PROJECT_DIR / folder).rglob("*.sql")
        if "source(" in code(path)
    )
    assert readers == []
    assert all("source(" in code(path) for path in (DBT_PROJECT_DIR / "models" / "staging").glob("*.sql"))


def test_staging_models_only_rename_and_cast():
    """jaffle-shop's rule: a staging model selects from one source and renames or casts its columns;
    filters, joins, unions and arithmetic belong to intermediate models and marts."""
    import re

    from workbank_dagster.settings import DBT_PROJECT_DIR

    for path in sorted((DBT_PROJECT_DIR / "models" / "staging").glob("*.sql")):
        sql = re.sub(r"--[^\n]*", "", path.read_text()).lower()
        assert sql.count("source(") == 1, path.name
        for word in (" where ", " join ", " union ", " group by ", "ref("):
            assert word not in f" {sql} ".replace("\n", " "), (path.name, word)
        assert not re.search(r"[^-*/]\s[/*]\s", sql.replace("select *", "")), (path.name, "arithmetic")


def test_the_manifest_is_parsed_again_when_a_project_file_is_renamed_or_removed(monkeypatch):
    """The manifest's key is what it was parsed from (names and contents of the project's files,
    the dbt-core version), not its age: a renamed or deleted file leaves every other file older
    than the manifest, which the mtime check it replaced took for 'current'."""
    from workbank_dagster.transform import project

    manifest = project.ensure_manifest()
    key = project.manifest_key()
    assert project._parsed_from(manifest, key)
    files = project.project_files()
    monkeypatch.setattr(project, "project_files", lambda: files[:-1])  # one file deleted
    assert project.manifest_key() != key
    renamed = [f.with_name("renamed_" + f.name) if f.name == "__sources.yml" else f for f in files]
    monkeypatch.setattr(project, "project_files", lambda: renamed)
    path_type = type(renamed[0])
    read = path_type.read_bytes
    monkeypatch.setattr(path_type, "read_bytes", lambda self: read(self.with_name(self.name.removeprefix("renamed_"))))
    assert project.manifest_key() != key  # the same bytes under another name
    monkeypatch.undo()
    assert project.manifest_key() == key


# Loads the definitions in a fresh process with the manifest's key made to differ, and dbt's parse
# (subprocess.run, through which ensure_manifest runs `dbt parse`) made to fail loudly; prints what
# happened. argv[1]: "dev" to load as `dagster dev` does (DAGSTER_IS_DEV_CLI).
_LOAD_WITH_A_STALE_MANIFEST = """
import os, subprocess, sys
from workbank_dagster.transform import project
project.manifest_key = lambda: "a key no manifest was parsed from"
prepared = []
project.ensure_manifest = lambda: prepared.append("ensure_manifest")
def no_parse(*args, **kwargs):
    raise SystemExit("dbt parse ran at import time")
subprocess.run = no_parse
if sys.argv[1] == "dev":
    os.environ["DAGSTER_IS_DEV_CLI"] = "1"
try:
    import workbank_dagster.definitions
except project.ManifestNotPrepared as exc:
    print("not prepared:", exc, "| prepared:", prepared)
else:
    print("loaded | prepared:", prepared)
"""


@pytest.mark.parametrize("mode", ["bare", "dev"])
def test_the_definitions_never_parse_dbt_at_import_time(mode):
    """#17: no `dbt parse` hidden in an import. Outside `dagster dev`, a manifest parsed from other
    project files is an error naming the command that prepares it (the old import parsed it);
    under `dagster dev` the preparer is asked (dagster-dbt's `prepare_if_dev`), and it is the
    preparer's parse (`ensure_manifest`), keyed, that runs."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _LOAD_WITH_A_STALE_MANIFEST, mode], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert "dbt parse ran at import time" not in done.stdout + done.stderr
    if mode == "bare":
        assert last.startswith("not prepared:") and "python -m workbank_dagster.cli prepare" in last and last.endswith("| prepared: []"), last
    else:
        # The patched parse did nothing, so the key still differs: prepared once, then the same error.
        assert last.startswith("not prepared:") and last.endswith("| prepared: ['ensure_manifest']"), last


def test_two_jobs_split_the_pipeline_where_its_storage_splits():
    """#18: `benchmark_partitions` holds the per-benchmark steps only (pool `partitions`, files),
    and the observations of the benchmark files they load (in no pool: they hash source files);
    `warehouse` holds every unpartitioned asset they feed (pool `warehouse`, DuckDB); `all_assets`
    (`make run`) holds both."""
    partitions, warehouse = (defs.resolve_job_def(name) for name in ("benchmark_partitions", "warehouse"))
    assert {"/".join(k.path) for k in partitions.asset_layer.selected_asset_keys} == {
        "files/benchmark_prompts", "files/benchmark_results",
        "raw/benchmark_prompts", "raw/benchmark_results", "raw/benchmark_instructions", "labeling/embedded_labels", "labeling/embedded_judgements"
    }
    assert {node.definition.name: node.definition.pool for node in partitions.graph.nodes if node.definition.pool != "partitions"} == {
        "files__benchmark_prompts": None, "files__benchmark_results": None
    }
    assert {node.definition.pool for node in warehouse.graph.nodes} == {"warehouse"}
    built = warehouse.asset_layer.selected_asset_keys
    for key in (["raw", "benchmark_catalog"], ["labeling", "label_catalog"], ["labeling", "judge_validation"], ["marts", "fct_task_coverage"], ["report", "headline"]):
        assert dg.AssetKey(key) in built, key
    assert not any(defs.resolve_assets_def(k).partitions_def for k in built)
    everything = defs.resolve_job_def("all_assets").asset_layer.selected_asset_keys
    assert partitions.asset_layer.selected_asset_keys | built <= everything
