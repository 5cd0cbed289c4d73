"""Assets materialized on a temporary DuckDB, with the real reference data and 2-3 small benchmarks."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import pandas as pd
import pytest
from conftest import small_source_dir
from partition_tables import partition_tables

from workbank_dagster import warehouse
from workbank_dagster.automation import benchmark_files_sensor
from workbank_dagster.labeling.judge_assets import embedded_judge_labels
from workbank_dagster.labeling.matching import LabelingRuntime
from workbank_dagster.labeling.onet_assets import occupation_prior, task_index
from workbank_dagster.partition_files import PartitionFiles
from workbank_dagster.resources import Warehouse
from workbank_dagster.settings import EMBEDDED_LABELER, PipelineSettings
from workbank_dagster.sources.assets import file_assets, raw_assets
from workbank_dagster.sources.benchmark_assets import benchmark_prompts, benchmark_results
from workbank_dagster.sources.validate import SourceFormatError

SMALL = ("cybench", "finance-agent", "paperbench")


@pytest.fixture()
def small_env(workbank_env, tmp_path, reduced_source_dir, monkeypatch):
    sources = small_source_dir(tmp_path, reduced_source_dir, SMALL)
    monkeypatch.setenv("WORKBANK_SOURCE_DIR", str(sources))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", list(SMALL))
    db = workbank_env / "warehouse.duckdb"
    return {"sources": sources, "instance": instance, "db": db, "partitions": workbank_env / "partitions", "resources": {"warehouse_db": Warehouse(db), "labeling_runtime": LabelingRuntime(), "pipeline_settings": PipelineSettings.from_env()}}


def _materialize(env, assets, partition_key=None, raise_on_error=True, selection=None):
    return dg.materialize(
        assets,
        instance=env["instance"],
        resources=env["resources"],
        partition_key=partition_key,
        raise_on_error=raise_on_error,
        selection=selection,
    )


# Two tables stand for all here: test_sources parses every file, the full-data run materializes every raw asset.
TYPED_TABLES = [dg.AssetKey([prefix, table]) for prefix in ("files", "raw") for table in ("onet_task_statements", "workbank_expert_ratings")]


def test_source_assets_write_typed_raw_tables(small_env):
    result = _materialize(small_env, [*file_assets, *raw_assets], selection=TYPED_TABLES)
    assert result.success
    statements = small_env["sources"] / "onet" / "task_statements_29_3.tsv"
    # The reduced sources' tasks (conftest.reduced_source_dir); test_sources checks the whole file's 18,796.
    tasks = len(statements.read_text(encoding="utf-8").splitlines()) - 1
    assert 1_000 < tasks < 18_796
    with warehouse.connect(small_env["db"]) as con:
        assert con.execute("select count(*) from raw.onet_task_statements").fetchone()[0] == tasks
        assert con.execute("select count(*) from raw.workbank_expert_ratings").fetchone()[0] == 2_038
        types = dict(con.execute("select column_name, data_type from information_schema.columns where table_name = 'onet_task_statements'").fetchall())
    assert types["task_id"] == "BIGINT" and types["task"] == "VARCHAR"
    events = result.asset_materializations_for_node("raw__onet_task_statements")
    assert events[0].metadata["dagster/row_count"].value == tasks
    # The file hash is the raw table's data version: what a changed file makes stale.
    check_data_version_is_sha256(small_env["instance"], dg.AssetKey(["raw", "onet_task_statements"]), statements)
    # The check can fail: the version is not another file's hash.
    with pytest.raises(AssertionError):
        check_data_version_is_sha256(small_env["instance"], dg.AssetKey(["raw", "onet_task_statements"]), small_env["sources"] / "onet" / "occupation_data_29_3.tsv")


def check_data_version_is_sha256(instance, key: dg.AssetKey, path) -> None:
    from dagster._core.definitions.data_version import extract_data_version_from_entry

    from workbank_dagster.common import file_sha256

    record = instance.get_latest_data_version_record(key)
    assert record is not None, f"{key.to_user_string()}: no data version recorded"
    assert extract_data_version_from_entry(record.event_log_entry) == dg.DataVersion(file_sha256(path)), key.to_user_string()


def test_benchmark_partition_bad_file_leaves_other_partitions_intact(small_env):
    for key in SMALL:
        assert _materialize(small_env, [benchmark_prompts], partition_key=key).success
    with partition_tables(small_env["partitions"]) as con:
        before = warehouse.table_hash(con, "raw", "benchmark_prompts")
    # Break cybench on its third line: its partition is rejected naming file and line, keeps its
    # previous rows, and the step goes on (the run fails at its end, in report/benchmark_files_check).
    path = small_env["sources"] / "benchmarks" / "cybench.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][: len(lines[2]) // 2] + "\n"
    path.write_text("".join(lines))
    result = _materialize(small_env, [benchmark_prompts], partition_key="cybench", raise_on_error=False)
    assert result.success
    materialization = result.asset_materializations_for_node("raw__benchmark_prompts")[0]
    errors = materialization.metadata["errors"].value
    assert "cybench.jsonl:3" in errors["cybench"] and "not valid JSON" in errors["cybench"]
    with partition_tables(small_env["partitions"]) as con:
        assert warehouse.table_hash(con, "raw", "benchmark_prompts") == before
        counts = dict(con.execute("select benchmark, count(*) from raw.benchmark_prompts group by 1").fetchall())
        recorded = con.execute("select benchmark, source_table, error from raw.benchmark_prompts_file_errors").fetchall()
    assert counts == {"cybench": 39, "finance-agent": 50, "paperbench": 23}
    assert [(b, t) for b, t, _ in recorded] == [("cybench", "benchmark_prompts")] and "cybench.jsonl:3" in recorded[0][2]


def test_results_partition_without_results_file_is_empty(small_env):
    assert _materialize(small_env, [benchmark_results], partition_key="paperbench").success
    assert _materialize(small_env, [benchmark_results], partition_key="cybench").success
    with partition_tables(small_env["partitions"]) as con:
        counts = dict(con.execute("select benchmark, count(*) from raw.benchmark_results group by 1").fetchall())
    assert counts == {"cybench": 9 * 39 - 1}  # o4-mini lacks one task (results/SOURCES.md)


def _prepare_labeling(env, onet_base) -> None:
    """What labeling reads of O*NET (the raw tables, the prior's file, the task index's O*NET files):
    a copy of the session's O*NET base, which materialized them (conftest.onet_base) as the sources
    and labeling assets do."""
    env["db"].parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(onet_base / "warehouse.duckdb", env["db"])
    shutil.copytree(onet_base / "models", env["db"].parent / "models")
    shutil.copytree(onet_base / "partitions" / "_shared", env["partitions"] / "_shared")


def test_a_new_data_folder_takes_the_prior_from_the_cache_with_the_same_weights(small_env, onet_base):
    """The O*NET base fitted the prior with the session's cache; a new data folder with that cache
    gets the same weights without fitting, and names the file it copied."""
    from workbank_dagster.labeling.prior import OccupationPrior

    small_env["db"].parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(onet_base / "warehouse.duckdb", small_env["db"])
    result = _materialize(small_env, [task_index, occupation_prior], selection=[dg.AssetKey(["labeling", "occupation_prior"])])
    metadata = result.asset_materializations_for_node("labeling__occupation_prior")[0].metadata
    assert metadata["refitted"].value is False and metadata["embedded_now"].value == 0
    cached = metadata["from_cache"].value
    assert cached.startswith(str(small_env["resources"]["pipeline_settings"].resolve().cache_dir / "priors"))
    fitted, copied = OccupationPrior.load(onet_base / "models" / "occupation_prior.npz"), OccupationPrior.load(small_env["db"].parent / "models" / "occupation_prior.npz")
    assert copied.codes == fitted.codes and copied.inputs_sha256 == fitted.inputs_sha256
    assert (copied.coef == fitted.coef).all() and (copied.intercept == fitted.intercept).all()
    assert metadata["inputs_sha256"].value == fitted.inputs_sha256
    # Its materialization recorded that key: the next run keeps the file, neither fitted nor copied.
    again = _materialize(small_env, [task_index, occupation_prior], selection=[dg.AssetKey(["labeling", "occupation_prior"])])
    metadata = again.asset_materializations_for_node("labeling__occupation_prior")[0].metadata
    assert (metadata["refitted"].value, metadata["from_cache"].value) == (False, False)
    # A file written over by another checkout's prior is not this key's: copied from the cache again.
    OccupationPrior(fitted.codes, fitted.coef, fitted.intercept, "another key").save(small_env["db"].parent / "models" / "occupation_prior.npz")
    again = _materialize(small_env, [task_index, occupation_prior], selection=[dg.AssetKey(["labeling", "occupation_prior"])])
    assert again.asset_materializations_for_node("labeling__occupation_prior")[0].metadata["from_cache"].value == cached


def test_the_cached_prior_is_named_by_its_key_which_covers_the_code_that_fits_it(package_copy, tmp_path):
    from workbank_dagster.labeling import occupation_knowledge
    from workbank_dagster.labeling.prior import prior_key

    settings = PipelineSettings.of(data_dir=str(tmp_path)).resolve()
    first = occupation_knowledge.prior_cache_path(settings, "a" * 64)
    assert first.parent == settings.cache_dir / "priors" and first != occupation_knowledge.prior_cache_path(settings, "b" * 64)
    texts = pd.DataFrame({"onet_soc_code": ["11-1011.00"], "text": ["Direct the organization."]})
    key = prior_key(texts, "embedding")
    assert key != prior_key(texts.assign(text="Plan the budget."), "embedding") and key != prior_key(texts, "another embedding")
    package_copy("labeling/prior.py", "model.fit(", "model = model\n        model.fit(")  # the fit, edited
    assert prior_key(texts, "embedding") != key


def test_labels_partition_materialized_twice_leaves_same_rows(small_env, onet_base):
    _prepare_labeling(small_env, onet_base)
    for key in ("cybench", "paperbench"):
        assert _materialize(small_env, [benchmark_prompts], partition_key=key).success
    hashes, relabeled = [], []
    # The second materialization finds every embedding cached and never loads the model (asserted below),
    # and, its inputs unchanged, keeps the labels it made instead of retrieving again.
    for _ in range(2):
        result = _materialize(small_env, [embedded_judge_labels], partition_key="cybench")
        assert result.success
        relabeled.append(len(_labels_metadata(result)["recomputed"].value))
        with partition_tables(small_env["partitions"]) as con:
            hashes.append(warehouse.table_hash(con, "labeling", "embedded_labels"))
    assert hashes[0] == hashes[1] and relabeled == [1, 0]
    # Rows of an embedded labeler the pipeline no longer runs (v5, replaced by v6 and then v7; its
    # judge is bench's now, bench/judge_v5.py) are dropped, even where nothing is relabeled: a run's
    # tables hold what this code makes.
    retired_labeler = "embedded:all-MiniLM-L6-v2:v5"
    files = PartitionFiles(small_env["partitions"])
    for table in ("embedded_labels", "embedded_judgements"):
        current = pd.read_parquet(files.path(table, "cybench"))
        retired = current[current["labeler"] == EMBEDDED_LABELER].assign(labeler=retired_labeler)
        files.write(table, "cybench", pd.concat([current, retired], ignore_index=True))
    result = _materialize(small_env, [embedded_judge_labels], partition_key="cybench")
    assert result.success and _labels_metadata(result)["recomputed"].value == []
    assert _labels_metadata(result)["retired_labelers_dropped"].value == [retired_labeler]
    with partition_tables(small_env["partitions"]) as con:
        assert warehouse.table_hash(con, "labeling", "embedded_labels") == hashes[0]
        assert con.execute("select count(*) from labeling.embedded_judgements where labeler = ?", [retired_labeler]).fetchone()[0] == 0
    # The key is in the materializations, the labels in their files: a key whose file is gone
    # (a deleted partitions folder) keeps nothing.
    (small_env["partitions"] / "embedded_judgements" / "cybench.parquet").unlink()
    result = _materialize(small_env, [embedded_judge_labels], partition_key="cybench")
    assert result.success and len(_labels_metadata(result)["recomputed"].value) == 1
    with partition_tables(small_env["partitions"]) as con:
        assert warehouse.table_hash(con, "labeling", "embedded_labels") == hashes[0]
    assert _materialize(small_env, [embedded_judge_labels], partition_key="paperbench").success
    with partition_tables(small_env["partitions"]) as con:
        rows = con.execute("select benchmark, count(distinct prompt_id), max(rank) from labeling.embedded_labels group by 1 order by 1").fetchall()
        statuses = dict(con.execute("select status, count(*) from labeling.embedded_judgements group by 1").fetchall())
        labelers = dict(con.execute("select labeler, max(rank) from labeling.embedded_labels group by 1").fetchall())
    assert [r[0] for r in rows] == ["cybench", "paperbench"] and all(r[2] <= 9 for r in rows)
    # Judges v7 and v3 judged every prompt of both benchmarks; v7 labels at most 3 tasks a prompt.
    assert sum(statuses.values()) == 2 * (39 + 23)
    assert labelers["embedded:all-MiniLM-L6-v2:v7"] <= 3 and labelers["embedded:all-MiniLM-L6-v2:v3"] <= 9
    metadata = _labels_metadata(result)
    assert metadata["labeler"].value == "embedded:all-MiniLM-L6-v2:v7"
    assert metadata["embedded_now"].value == 0 and metadata["model_loaded"].value is False


def _labels_metadata(result) -> dict:
    events = result.asset_materializations_for_node("embedded_judge_labels")
    return [e for e in events if e.asset_key == dg.AssetKey(["labeling", "embedded_labels"])][0].metadata


def test_a_changed_benchmark_is_relabeled_and_only_it(small_env, onet_base):
    _prepare_labeling(small_env, onet_base)
    for key in SMALL:
        assert _materialize(small_env, [benchmark_prompts], partition_key=key).success
    both = dg.PartitionKeyRange("cybench", "paperbench")  # all three, as one single-run backfill
    first = dg.materialize([embedded_judge_labels], instance=small_env["instance"], resources=small_env["resources"],
                           tags={"dagster/asset_partition_range_start": both.start, "dagster/asset_partition_range_end": both.end})
    assert first.success and len(_labels_metadata(first)["recomputed"].value) == 3
    path = small_env["sources"] / "benchmarks" / "paperbench.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))  # one prompt fewer
    assert _materialize(small_env, [benchmark_prompts], partition_key="paperbench").success
    second = dg.materialize([embedded_judge_labels], instance=small_env["instance"], resources=small_env["resources"],
                            tags={"dagster/asset_partition_range_start": both.start, "dagster/asset_partition_range_end": both.end})
    assert _labels_metadata(second)["recomputed"].value == ["paperbench"]
    with partition_tables(small_env["partitions"]) as con:
        counts = dict(con.execute("select benchmark, count(*) from labeling.embedded_judgements group by 1").fetchall())
    assert counts == {"cybench": 2 * 39, "finance-agent": 2 * 50, "paperbench": 2 * 22}  # v7 and v3


def _tick(small_env, instance, cursor=None) -> dg.SensorResult:
    """One evaluation of benchmark_files_sensor. A resource that holds other resources
    (pipeline_settings) is opened as a context manager, as the daemon opens it."""
    with dg.build_sensor_context(resources=small_env["resources"], instance=instance, cursor=cursor) as context:
        return benchmark_files_sensor(context)


def test_sensor_first_tick_requests_only_partitions_never_materialized(small_env):
    assert _materialize(small_env, [benchmark_prompts], partition_key="cybench").success
    first = _tick(small_env, small_env["instance"])
    assert sorted(r.partition_key for r in first.run_requests) == ["finance-agent", "paperbench"]
    assert json.loads(first.cursor).keys() == set(SMALL)


def test_sensor_adds_partition_and_requests_it_in_the_same_result(small_env):
    instance = small_env["instance"]
    first = _tick(small_env, instance)
    assert sorted(r.partition_key for r in first.run_requests) == sorted(SMALL)
    assert {r.job_name for r in first.run_requests} == {"benchmark_partitions"}
    assert not first.dynamic_partitions_requests  # all three already exist
    # A new benchmark file: its partition is added and requested in one result.
    shutil.copy(small_env["sources"] / "benchmarks" / "paperbench.jsonl", small_env["sources"] / "benchmarks" / "my-bench.jsonl")
    text = (small_env["sources"] / "benchmarks" / "my-bench.jsonl").read_text().replace('"benchmark": "paperbench"', '"benchmark": "my-bench"')
    (small_env["sources"] / "benchmarks" / "my-bench.jsonl").write_text(text)
    second = _tick(small_env, instance, first.cursor)
    assert [r.partition_key for r in second.run_requests] == ["my-bench"]
    adds = [req for req in second.dynamic_partitions_requests if isinstance(req, dg.AddDynamicPartitionsRequest)]
    assert adds and adds[0].partition_keys == ["my-bench"]
    # Nothing changed: nothing requested.
    third = _tick(small_env, instance, second.cursor)
    assert third.run_requests == []
    # A file whose name is not a safe slug fails the tick, naming it; nothing is acted on meanwhile.
    (small_env["sources"] / "benchmarks" / "finance-agent.jsonl").unlink()
    (small_env["sources"] / "benchmarks" / "Bad Name.jsonl").write_text("{}\n")
    with pytest.raises(SourceFormatError, match="Bad Name.jsonl: unsafe benchmark slug"):
        _tick(small_env, instance, third.cursor)
    # Moved away: the removed file deletes its partition.
    (small_env["sources"] / "benchmarks" / "Bad Name.jsonl").unlink()
    fourth = _tick(small_env, instance, third.cursor)
    deletes = [req for req in fourth.dynamic_partitions_requests if isinstance(req, dg.DeleteDynamicPartitionsRequest)]
    assert deletes and deletes[0].partition_keys == ["finance-agent"]
    # Nothing of it to build: the warehouse job runs, whose catalogs delete its files.
    assert [(r.job_name, r.partition_key) for r in fourth.run_requests] == [("warehouse", None)]
    assert json.loads(fourth.cursor).keys() == {"cybench", "paperbench", "my-bench"}


def test_the_warehouse_job_starts_when_partitions_changed_and_none_is_running(small_env):
    """warehouse_after_partitions: nothing materialized, nothing to do; a partition materialized after
    the catalogs last were starts the warehouse job, once per state, and not while a
    benchmark_partitions run is queued or running; the warehouse run's catalogs settle it."""
    from dagster._core.storage.dagster_run import DagsterRun

    from workbank_dagster.automation import warehouse_after_partitions

    instance = small_env["instance"]

    def tick():
        return warehouse_after_partitions(dg.build_sensor_context(instance=instance))

    def materialized(*key, partition=None):
        instance.report_runless_asset_event(dg.AssetMaterialization(dg.AssetKey(list(key)), partition=partition))

    assert isinstance(tick(), dg.SkipReason)
    materialized("raw", "benchmark_catalog")
    materialized("labeling", "label_catalog")
    assert isinstance(tick(), dg.SkipReason)
    materialized("labeling", "embedded_labels", partition="cybench")
    (request,) = tick().run_requests
    assert request.run_key == tick().run_requests[0].run_key  # the same state asks once (the run key)
    running = DagsterRun(job_name="benchmark_partitions", run_id="0" * 36, status=dg.DagsterRunStatus.STARTED)
    instance.run_storage.add_run(running)
    assert "waiting for 1 benchmark_partitions run" in tick().skip_message
    instance.run_storage.handle_run_event(running.run_id, dg.DagsterEvent(  # it ends
        event_type_value="PIPELINE_SUCCESS", job_name="benchmark_partitions", message="done"
    ))
    materialized("raw", "benchmark_prompts", partition="paperbench")
    (later,) = tick().run_requests
    assert later.run_key != request.run_key
    materialized("raw", "benchmark_catalog")  # only one of the two catalogs has taken it in
    assert tick().run_requests
    materialized("labeling", "label_catalog")
    assert isinstance(tick(), dg.SkipReason)
