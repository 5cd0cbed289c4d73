from __future__ import annotations

import dagster as dg
import duckdb
import pandas as pd
import pytest

from workbank_dagster import warehouse
from workbank_dagster.labeling.chat_model import ChatModelResource
from workbank_dagster.resources import WarehouseResource
from workbank_dagster.settings import REPO_ROOT, PipelineSettings


def test_defaults_resolve_from_repository_root(monkeypatch, tmp_path):
    for name in ("WORKBANK_DATA_DIR", "WORKBANK_DUCKDB_PATH", "WORKBANK_SOURCE_DIR", "WORKBANK_CACHE_DIR", "WORKBANK_OUTPUT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # the working directory must not matter
    settings = PipelineSettings.from_env().resolve()
    assert settings.duckdb_path == REPO_ROOT / "data" / "warehouse.duckdb"
    assert settings.coverage_threshold == 5
    # No source folder: the pinned sources (sources/fetch.py), looked up first in shared/data beside the repository.
    assert settings.source_dir is None and settings.benchmarks_dir is None
    from workbank_dagster.settings import default_source_dir

    assert default_source_dir() in (None, (REPO_ROOT.parent / "shared" / "data").resolve())


def test_bad_settings_are_named(monkeypatch):
    monkeypatch.setenv("WORKBANK_COVERAGE_THRESHOLD", "five")
    with pytest.raises(ValueError, match="WORKBANK_COVERAGE_THRESHOLD"):
        PipelineSettings.from_env().resolve()
    monkeypatch.setenv("WORKBANK_COVERAGE_THRESHOLD", "5")
    monkeypatch.setenv("WORKBANK_EXPOSURE_RATER", "robots")
    with pytest.raises(ValueError, match="human, gpt4"):
        PipelineSettings.from_env().resolve()
    monkeypatch.delenv("WORKBANK_EXPOSURE_RATER")
    for database in ("md:workbank", "MD:workbank", ":memory:"):
        monkeypatch.setenv("WORKBANK_DUCKDB_PATH", database)
        with pytest.raises(ValueError, match="WORKBANK_DUCKDB_PATH.*MotherDuck"):
            PipelineSettings.from_env().resolve()
    monkeypatch.delenv("WORKBANK_DUCKDB_PATH")
    for variable, value, message in (
        ("WORKBANK_COVERAGE_THRESHOLD", "0", "greater than or equal to 1"),
        ("WORKBANK_MIN_LABEL_SIMILARITY", "high", "expected a number"),
        ("WORKBANK_SENSITIVITY_THRESHOLDS", "1,3,x", "expected a whole number"),
        ("WORKBANK_SOURCE_DIR", "/no/such/folder", "no such directory"),
        ("WORKBANK_BENCHMARKS_DIR", "/no/such/folder", "no such directory"),
        ("WORKBANK_SOURCE_DIR", "fetch", "`fetch` is the default now: leave the setting empty"),
    ):
        monkeypatch.setenv(variable, value)
        with pytest.raises(ValueError, match=f"{variable}='{value}': .*{message}"):
            PipelineSettings.from_env()
        monkeypatch.delenv(variable)
    assert PipelineSettings.from_env({"WORKBANK_SENSITIVITY_THRESHOLDS": "2, 4"}).resolve().sensitivity_thresholds == (2, 4)


def test_settings_are_one_resource_per_concern_shown_in_the_launchpad_and_checked_once_per_run():
    """Every parameter is a typed, described field of one resource per concern: `paths`, `method`
    and `embedded_judge` (the LLM judge's is `chat_model`). The run config schema (what the launchpad
    shows) has each under its resource with its default, `pipeline_settings` has none of its own, a
    run's override of one reaches the assets through `pipeline_settings`, and a bad override fails
    the run once, at resource initialization, naming the field. All were one resource's fields."""
    from workbank_dagster.definitions import defs
    from workbank_dagster.settings import CONCERNS, FIELDS, Settings

    resources = defs.resolve_job_def("all_assets").run_config_schema.config_type.fields["resources"].config_type.fields
    shown = {key: resources[key].config_type.fields["config"].config_type.fields for key in CONCERNS}
    assert {key: set(fields) for key, fields in shown.items()} == {
        "paths": {"source_dir", "benchmarks_dir", "data_dir", "duckdb_path", "partitions_dir", "cache_dir", "judgement_cache_path",
                  "output_dir", "download_dir", "upstream_base", "pypi_base", "audits_dir", "benchmark_instructions"},
        "method": {"coverage_threshold", "sensitivity_thresholds", "active_labeler", "exposure_rater", "exposure_definition",
                   "employment_split", "hours_per_year", "hours_per_day", "cluster_level", "min_prompts_per_task"},
        "embedded_judge": {"embedding_model", "embed_batch_size", "judge_occupations", "min_label_similarity",
                           "n_candidate_occupations", "candidates_per_occupation", "candidates_nearest"},
    }
    assert list(FIELDS) == list(Settings.__dataclass_fields__)
    assert all(CONCERNS[key].model_fields[name].description for key, fields in shown.items() for name in fields)
    assert shown["embedded_judge"]["min_label_similarity"].default_value == 0.25 and shown["method"]["coverage_threshold"].default_value == 5
    own = resources["pipeline_settings"].config_type.fields
    assert "config" not in own or not own["config"].config_type.fields

    seen = {}

    @dg.asset
    def reads_settings(pipeline_settings: PipelineSettings) -> None:
        seen["settings"] = pipeline_settings.resolve()

    given = {key: defs.resources[key] for key in [*CONCERNS, "pipeline_settings"]}
    override = {"resources": {"method": {"config": {"coverage_threshold": 3}}, "embedded_judge": {"config": {"min_label_similarity": 0.3}}}}
    assert dg.materialize([reads_settings], resources=given, run_config=override).success
    assert (seen["settings"].coverage_threshold, seen["settings"].min_label_similarity) == (3, 0.3)
    bad = {"resources": {"method": {"config": {"exposure_rater": "robots"}}}}
    with pytest.raises(dg.DagsterResourceFunctionError) as failed:
        dg.materialize([reads_settings], resources=given, run_config=bad)
    assert "exposure_rater" in str(failed.value.__cause__) and "human, gpt4" in str(failed.value.__cause__)


def test_the_documented_launchpad_settings_reach_the_assets():
    """docs/pipeline.md's run config example is valid for the main job, and each value it gives
    reaches the assets' settings."""
    from doc_blocks import config_block

    from workbank_dagster.definitions import defs
    from workbank_dagster.settings import CONCERNS

    config = config_block(REPO_ROOT / "docs" / "pipeline.md", "launchpad_settings")
    assert dg.validate_run_config(defs.resolve_job_def("all_assets"), config)
    seen = {}

    @dg.asset
    def reads_settings(pipeline_settings: PipelineSettings) -> None:
        seen["settings"] = pipeline_settings.resolve()

    dg.materialize([reads_settings], resources={key: defs.resources[key] for key in [*CONCERNS, "pipeline_settings"]}, run_config=config)
    given = {name: value for resource in config["resources"].values() for name, value in resource["config"].items()}
    assert given == {"cluster_level": "minor", "data_dir": "data_minor"}
    assert (seen["settings"].cluster_level, seen["settings"].data_dir) == ("minor", REPO_ROOT / "data_minor")


def test_settings_given_by_name_go_to_their_resource():
    """`PipelineSettings.of` gives each named setting to its concern's resource and keeps the others'
    defaults; a name no resource has is an error, not a setting quietly dropped."""
    settings = PipelineSettings.of(data_dir="elsewhere", cluster_level="minor", candidates_nearest=11)
    assert (settings.paths.data_dir, settings.method.cluster_level, settings.embedded_judge.candidates_nearest) == ("elsewhere", "minor", 11)
    assert settings.method.coverage_threshold == 5 and settings.resolve().duckdb_path == REPO_ROOT / "elsewhere" / "warehouse.duckdb"
    with pytest.raises(TypeError, match="no such setting: partition_workers"):
        PipelineSettings.of(partition_workers=3)


def test_the_api_key_is_an_env_var_needed_only_by_the_llm_job(monkeypatch):
    """The key reaches the run config as the name of its variable; an unset variable fails the
    launch of the LLM job with a message naming it, and not the embedded pipeline's job."""
    import dagster as dg

    monkeypatch.setenv("WORKBANK_LLM_API_KEY_ENV", "MY_LLM_KEY")
    chat = ChatModelResource.from_env()
    assert isinstance(chat.api_key, dg.EnvVar) and chat.api_key.env_var_name == "MY_LLM_KEY"
    monkeypatch.delenv("MY_LLM_KEY", raising=False)

    @dg.asset
    def needs_chat(chat_model: ChatModelResource) -> None:
        pass

    @dg.asset
    def needs_nothing() -> None:
        pass

    resources = {"chat_model": chat}
    assert dg.materialize([needs_nothing, needs_chat], selection=[needs_nothing], resources=resources).success
    with pytest.raises(dg.DagsterInvalidConfigError, match="MY_LLM_KEY"):
        dg.materialize([needs_chat], resources=resources)
    monkeypatch.setenv("MY_LLM_KEY", "sk-test")
    assert dg.materialize([needs_chat], resources=resources).success


def test_replace_rows_touches_only_its_partition(tmp_path):
    path = tmp_path / "w.duckdb"
    a = pd.DataFrame({"benchmark": ["a", "a"], "prompt_id": ["1", "2"], "n": [1, 2]})
    b = pd.DataFrame({"benchmark": ["b"], "prompt_id": ["1"], "n": [3]})
    with warehouse.connect(path) as con:
        warehouse.replace_rows(con, "raw", "t", a, {"benchmark": "a"})
        warehouse.replace_rows(con, "raw", "t", b, {"benchmark": "b"})
        before = warehouse.table_hash(con, "raw", "t")
        warehouse.replace_rows(con, "raw", "t", a, {"benchmark": "a"})  # idempotent
        assert warehouse.table_hash(con, "raw", "t") == before
        warehouse.replace_rows(con, "raw", "t", a.iloc[:1], {"benchmark": "a"})
        assert con.execute("select benchmark, count(*) from raw.t group by 1 order by 1").fetchall() == [("a", 1), ("b", 1)]


def test_replace_rows_rolls_back_on_schema_mismatch(tmp_path):
    path = tmp_path / "w.duckdb"
    with warehouse.connect(path) as con:
        warehouse.replace_rows(con, "raw", "t", pd.DataFrame({"benchmark": ["a"], "n": [1]}), {"benchmark": "a"})
        with pytest.raises(ValueError, match="do not match"):
            warehouse.replace_rows(con, "raw", "t", pd.DataFrame({"benchmark": ["a"], "m": [1]}), {"benchmark": "a"})
        assert con.execute("select count(*) from raw.t").fetchone()[0] == 1


def test_table_hash_counts_repeated_rows(tmp_path):
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        warehouse.replace_table(con, "raw", "one", pd.DataFrame({"x": [1]}))
        warehouse.replace_table(con, "raw", "two", pd.DataFrame({"x": [1, 1, 1]}))
        assert warehouse.table_hash(con, "raw", "one") != warehouse.table_hash(con, "raw", "two")


def test_connect_waits_for_a_lock_then_fails_clearly(tmp_path):
    import multiprocessing

    path = tmp_path / "w.duckdb"
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    release = ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(path), ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(duckdb.IOException):
            with warehouse.connect(path, wait_seconds=0.5):
                pass
    finally:
        release.set()
        holder.join(30)
    with warehouse.connect(path, wait_seconds=5) as con:  # free again
        assert con.execute("select 1").fetchone() == (1,)


def _hold_lock(path, ready, release):
    con = duckdb.connect(path)
    ready.set()
    release.wait(30)
    con.close()


def test_a_judgements_file_from_before_confidence_keeps_the_other_labelers_rows(tmp_path):
    """A benchmark's judgements written before judge v4 have no `confidence`. Writing one labeler's
    rows replaces only that labeler's: the other labelers' rows stay, with confidence empty, and
    the file has today's columns."""
    from workbank_dagster.labeling.label_files import read_partitions, write_partitions
    from workbank_dagster.labeling.label_tables import JUDGEMENT_COLUMNS, LABEL_COLUMNS
    from workbank_dagster.partition_files import PartitionFiles

    files = PartitionFiles(tmp_path / "partitions")
    before = pd.DataFrame([("b", "1", "v3", "h", "labeled", "", 2, 1)], columns=JUDGEMENT_COLUMNS[:-1]).astype({"n_labels": "Int64", "n_chunks": "Int64"})
    files.write("embedded_judgements", "b", pd.concat([before, before.assign(labeler="v4", status="no_match")], ignore_index=True))
    judgements = pd.DataFrame([("b", "1", "v4", "h2", "abstained", "confidence 0.01 below 0.05", 0, 1, 0.01)], columns=JUDGEMENT_COLUMNS).astype(
        {"n_labels": "Int64", "n_chunks": "Int64", "confidence": "Float64"}
    )
    labels = pd.DataFrame(columns=LABEL_COLUMNS).astype({"task_id": "Int64", "rank": "Int64", "score": "Float64"})
    write_partitions(files, "embedded", "v4", ["b"], labels, judgements)
    _, found = read_partitions(files, "embedded", None, ["b"])
    assert list(found.columns) == JUDGEMENT_COLUMNS
    assert [(r.labeler, r.status, None if pd.isna(r.confidence) else r.confidence) for r in found.itertuples()] == [
        ("v3", "labeled", None), ("v4", "abstained", 0.01)
    ]
    _, only_v4 = read_partitions(files, "embedded", "v4", ["b"])
    assert only_v4["status"].tolist() == ["abstained"]


def test_llm_defaults_are_written_once_and_bad_values_are_named(monkeypatch):
    """The chat model's settings are declared once, by ChatModelResource (labeling/chat_model.py):
    LLMSettings, what the judge takes, has exactly its fields but the key, with its defaults; its
    environment variables go through the same typed parsers as every other setting."""
    from dataclasses import MISSING, fields

    from workbank_dagster.labeling.chat_model import LLMSettings

    declared = {name: field.default for name, field in ChatModelResource.model_fields.items() if name != "api_key"}
    assert len(declared) >= 14
    assert {f.name: f.default for f in fields(LLMSettings)} == declared
    assert all(f.default is not MISSING for f in fields(LLMSettings))
    defaults = LLMSettings()
    assert LLMSettings(model="m").max_labels == defaults.max_labels == ChatModelResource.model_fields["max_labels"].default
    for suffix in ("MODEL", "BASE_URL", "API_KEY_ENV", "CONCURRENCY", "SPEND_CAP_USD", "INPUT_USD_PER_MTOK", "OUTPUT_USD_PER_MTOK"):
        monkeypatch.delenv(f"WORKBANK_LLM_{suffix}", raising=False)
    assert ChatModelResource.from_env().llm_settings() == defaults
    assert not hasattr(PipelineSettings.from_env().resolve(), "llm_model")  # it was never read: the resource's model is the one used
    for variable, value in (("WORKBANK_LLM_CONCURRENCY", "four"), ("WORKBANK_LLM_SPEND_CAP_USD", "5 dollars"), ("WORKBANK_LLM_CONCURRENCY", "2.5")):
        monkeypatch.setenv(variable, value)
        with pytest.raises(ValueError, match=variable):
            ChatModelResource.from_env()
        monkeypatch.delenv(variable)


def test_delete_rows_except_keeps_the_named_keys_and_nulls(tmp_path):
    """How removed partitions leave (raw/benchmark_catalog, the audit catalog): rows of every key not
    kept go, within `where` only; an empty keep list empties the table but for NULL keys, as NOT IN would."""
    with warehouse.connect(tmp_path / "w.duckdb") as con:
        assert warehouse.delete_rows_except(con, "raw", "missing", "benchmark", ["a"]) == 0
        con.execute("create schema raw")
        con.execute("create table raw.t as select * from (values ('a', 'x'), ('b', 'x'), ('b', 'y'), (null, 'x')) as v(benchmark, kind)")
        assert warehouse.delete_rows_except(con, "raw", "t", "benchmark", ["a"], where={"kind": "y"}) == 1
        assert sorted(con.execute("select benchmark, kind from raw.t where benchmark is not null").fetchall()) == [("a", "x"), ("b", "x")]
        assert warehouse.delete_rows_except(con, "raw", "t", "benchmark", ["a"]) == 1
        assert warehouse.delete_rows_except(con, "raw", "t", "benchmark", []) == 1
        assert con.execute("select benchmark, kind from raw.t").fetchall() == [(None, "x")]


def test_a_launchpad_duckdb_path_moves_the_warehouse(tmp_path):
    """The warehouse's path is said once, in `paths`: a run that sets duckdb_path (launchpad,
    run config) reads and writes that file. warehouse_db used to be built with the path when the
    definitions loaded, so such a run moved the settings and not the warehouse."""
    from workbank_dagster.definitions import defs

    seen = {}

    @dg.asset
    def probe(warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> None:
        seen.update(warehouse=warehouse_db.path, settings=str(pipeline_settings.resolve().duckdb_path))

    target = tmp_path / "elsewhere.duckdb"
    resources = {key: defs.resources[key] for key in ("paths", "method", "embedded_judge", "pipeline_settings", "warehouse_db")}
    dg.materialize([probe], resources=resources, run_config={"resources": {"paths": {"config": {"duckdb_path": str(target)}}}})
    assert seen == {"warehouse": str(target), "settings": str(target)}


def test_every_resource_of_the_definitions_is_a_typed_resource():
    """Configuration travels one way: typed resources (`ConfigurableResource`), whose fields the
    launchpad shows. warehouse_db was an old-style `@dg.resource` reading the settings by key."""
    from workbank_dagster.definitions import defs

    untyped = [key for key, resource in defs.resources.items() if isinstance(resource, dg.ResourceDefinition) and not isinstance(resource, dg.ConfigurableResource)]
    assert untyped == []


def test_the_report_s_view_of_the_settings_has_no_path(tmp_path):
    """A data folder that moved makes the same report, so the view the report shows and keys on
    (`describe`) has no path; a setting that changes a number is in it."""
    here = PipelineSettings.of(data_dir=str(tmp_path / "a")).resolve()
    moved = PipelineSettings.of(data_dir=str(tmp_path / "b"), cache_dir=str(tmp_path / "c")).resolve()
    assert here.describe() == moved.describe()
    assert here.describe() != PipelineSettings.of(data_dir=str(tmp_path / "a"), cluster_level="minor").resolve().describe()
    assert not [key for key, value in here.describe().items() if str(tmp_path) in str(value)]


def test_the_warehouse_and_dbt_bound_duckdb_s_memory(tmp_path):
    """DuckDB's default takes 80% of the machine before it spills: the pipeline's connections and
    dbt's profile set one bounded limit instead, so a large sort spills (bench/warehouse_growth.py)."""
    import yaml

    with warehouse.connect(tmp_path / "w.duckdb") as con:
        limit = con.execute("select current_setting('memory_limit')").fetchone()[0]
    assert limit.endswith("GiB") and float(limit.split()[0]) <= 3.0, limit
    profile = yaml.safe_load((REPO_ROOT / "dbt_project" / "profiles.yml").read_text())
    assert profile["workbank"]["outputs"]["local"]["settings"]["memory_limit"] == warehouse.MEMORY_LIMIT


def test_the_resolved_settings_have_their_resources_fields():
    """Settings and LLMSettings are spelled out for type checkers; each has exactly its resources'
    fields (LLMSettings all but the key, with the resource's defaults), in the resources' order."""
    import dataclasses
    import typing
    from pathlib import Path

    from workbank_dagster.labeling.chat_model import ChatModelResource, LLMSettings
    from workbank_dagster.settings import CONCERNS, FIELDS, Settings

    resolved = typing.get_type_hints(Settings)
    assert list(resolved) == list(FIELDS)
    for name, key in FIELDS.items():
        field = CONCERNS[key].model_fields[name]
        kind = resolved[name]
        if kind in (Path, Path | None):
            assert field.annotation is str, name  # a path is given as text and resolved
        elif name == "sensitivity_thresholds":
            assert (field.annotation, kind) == (list[int], tuple[int, ...])
        else:
            assert kind == field.annotation, name
    llm = {f.name: f for f in dataclasses.fields(LLMSettings)}
    hints = typing.get_type_hints(LLMSettings)
    assert list(llm) == [name for name in ChatModelResource.model_fields if name != "api_key"]
    for name, field in llm.items():
        assert (hints[name], field.default) == (ChatModelResource.model_fields[name].annotation, ChatModelResource.model_fields[name].default), name
