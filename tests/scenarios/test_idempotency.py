"""Idempotency of every asset: materialized again, each leaves the same tables and output files.

On three small benchmarks: `make run` from an empty folder (all_assets over every partition, then
user_audits; the session's `small_base_run`, copied), every table and view of every schema hashed,
and every output file; a table and a view that no dbt model builds put into the warehouse (what a
renamed or removed model leaves); `make run` again, hashed again (they must be gone); then
the sensor's job (benchmark_partitions) for one partition, which rewrites that benchmark's files,
then the job the partitions start (warehouse), which rebuilds everything downstream, hashed a third time. The second and third snapshots must equal the
first, table by table and file by file (warehouse_snapshot.py: canonical hashes, floats to 10
significant digits; bit-level differences are reported as warnings). The first snapshot must cover
every asset the two jobs select: each asset keyed [schema, name] in a warehouse schema is the table
or view schema.name; the report assets write the output files.

(test_assets.py already checks one labels partition materialized twice; this covers every asset.)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import dagster as dg
import duckdb
import warehouse_snapshot as snap
from concurrency_run import pipeline_env
from conftest import ARTIFACTS, copy_small_run

from workbank_dagster.settings import REPO_ROOT

REFRESHED = "cybench"
HELPER = REPO_ROOT / "tests" / "support" / "concurrency_run.py"
WAREHOUSE_SCHEMAS = {"raw", "labeling", "staging", "intermediate", "marts", "analysis"}
# Assets keyed in a warehouse schema that write no table: the task index lives in the embedding cache.
NOT_TABLES = {"labeling/task_index", "labeling/occupation_prior"}  # an index in memory, a model file
# The per-benchmark tables are files, one per benchmark (partition_files.py), not warehouse tables;
# dbt copies them into staging, whose tables the snapshots hash.
PARTITION_FILES = {
    "raw/benchmark_prompts", "raw/benchmark_results", "raw/benchmark_instructions", "labeling/embedded_labels", "labeling/embedded_judgements"
}
JOBS = ("all_assets", "user_audits")  # what `make run` launches


def _run(args, env, name):
    completed = subprocess.run([sys.executable, str(HELPER), *args], check=False, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"idempotency_{name}.log").write_text(completed.stdout + completed.stderr)
    assert completed.returncode == 0, completed.stderr[-5000:]
    return completed


def _selected_assets(*, observed: bool = False) -> set[str]:
    """The assets the jobs materialize, or (`observed`) the source files they observe (files/*)."""
    from workbank_dagster.definitions import defs

    keys = set()
    for job in JOBS:
        keys |= {"/".join(key.path) for key in defs.resolve_job_def(job).asset_layer.selected_asset_keys
                 if defs.resolve_assets_def(key).is_observable == observed}
    return keys


def _observed(home, keys) -> list[str]:
    """The `keys` observed at least once (an observation of a source file, its SHA-256 the data version)."""
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        return sorted(key for key in keys if instance.fetch_observations(dg.AssetKey(key.split("/")), limit=1).records)
    finally:
        instance.dispose()


def _materialization_runs(home, keys) -> dict[str, set[str]]:
    """asset -> the runs that materialized it."""
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        return {key: {r.run_id for r in instance.fetch_materializations(dg.AssetKey(key.split("/")), limit=1000).records} for key in keys}
    finally:
        instance.dispose()


GROWS = {"analysis/coverage_history", "report/table_exports", "report/data_dictionary"}


def _unpartitioned(keys) -> list[str]:
    """The selected assets with one version each: every one but a partitioned one (a run of several
    partitions reports none: Dagster keeps a version per partition). The dbt models are among them:
    each reports what its relation holds (transform/metadata.model_data_versions)."""
    from workbank_dagster.definitions import defs

    return [key for key in sorted(keys) if defs.resolve_assets_def(dg.AssetKey(key.split("/"))).partitions_def is None]


def _data_versions(home, keys) -> dict[str, tuple[str | None, str | None]]:
    """asset -> (the data version its last materialization reported, whether the step gave it)."""
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        out = {}
        for key in keys:
            event = instance.get_latest_materialization_event(dg.AssetKey(key.split("/")))
            tags = (event.asset_materialization.tags or {}) if event else {}
            out[key] = (tags.get("dagster/data_version"), tags.get("dagster/data_version_is_user_provided"))
        return out
    finally:
        instance.dispose()


# analysis.coverage_history logs the headline's materializations, so every run adds a row (the
# snapshots leave it out: warehouse_snapshot.LOG_TABLES). Here the rows of the refreshes that moved
# the map must stay as they were, and each run adds one row that did not move it.
LOG = "analysis.coverage_history"


def _log(data_dir) -> tuple[int, str]:
    with duckdb.connect(str(data_dir / "warehouse.duckdb"), read_only=True) as con:
        return con.execute(f"select count(*) from {LOG}").fetchone()[0], snap.canonical_hash(con, f"(select * from {LOG} where moved)")


def _history_hash(data_dir, rows: int) -> str:
    """A canonical hash of the history's first `rows` rows, all columns."""
    with duckdb.connect(str(data_dir / "warehouse.duckdb"), read_only=True) as con:
        return snap.canonical_hash(con, f"(select * from {LOG} where refresh <= {rows})")


def _snapshot(data_dir, copied_from):
    tables = snap.warehouse_hashes(data_dir / "warehouse.duckdb")
    # The copied dbt docs name the base run's folder until `dbt docs generate` runs here (after the wipe).
    files = snap.file_hashes(data_dir / "outputs", data_dir, copied_from)
    return tables, files


def _compare(label, first, second) -> list[str]:
    """What differs canonically (the test fails on it); bit-level differences are only reported."""
    (tables_1, files_1), (tables_2, files_2) = first, second
    problems = [f"{label}: table {name}" for name in snap.differences(tables_1["canonical"], tables_2["canonical"])]
    problems += [f"{label}: file {name}" for name in snap.differences(files_1["canonical"], files_2["canonical"])]
    if not problems:
        stem = label.split()[0]
        snap.report_exact_differences(f"{label}, tables", tables_1["exact"], tables_2["exact"], ARTIFACTS / f"idempotency_exact_tables_{stem}.json")
        snap.report_exact_differences(f"{label}, files", files_1["exact"], files_2["exact"], ARTIFACTS / f"idempotency_exact_files_{stem}.json")
    return problems


def test_every_asset_materialized_again_leaves_the_same_tables_and_files(tmp_path, small_base_run, session_cache):
    from workbank_dagster.transform.project import ensure_manifest

    ensure_manifest()
    root = tmp_path / "run"
    # The first `make run` is the session's run from an empty folder on SMALL, copied here.
    sources, _ = copy_small_run(small_base_run, root, session_cache)
    env = pipeline_env(root, sources, session_cache)
    data_dir, home = root / "data", root / "dagster_home"
    selected = _selected_assets()
    timings = {}
    first = _snapshot(data_dir, small_base_run / "data")

    # Every asset was materialized, and each one that writes a table has its table.
    runs = _materialization_runs(home, selected)
    assert [key for key, ids in runs.items() if not ids] == [], "assets never materialized"
    observed = _selected_assets(observed=True)  # make run observes the source files before it loads them
    assert observed and _observed(home, observed) == sorted(observed), "source files never observed"
    tables = snap.warehouse_tables(data_dir / "warehouse.duckdb")
    expected = {key.replace("/", ".", 1) for key in selected if key.split("/")[0] in WAREHOUSE_SCHEMAS and key not in NOT_TABLES | PARTITION_FILES}
    assert sorted(expected - set(tables)) == [], "assets without their table"
    assert PARTITION_FILES <= selected
    assert [key for key in sorted(PARTITION_FILES) if not list((data_dir / "partitions" / key.split("/")[1]).glob("*.parquet"))] == [], "assets without their files"
    assert "headline.json" in first[1]["canonical"]
    assert {key for key in selected if key.startswith("report/")} and len(first[1]["canonical"]) > 1
    unowned = sorted(set(tables) - expected)  # written by an asset under another name (memo tables)

    log_rows, moved = _log(data_dir)
    # Each step reports the data version of what it wrote (a digest of its content), so writing the
    # same again is no news to what reads it; the coverage history grows every run.
    versioned = _unpartitioned(selected)
    assert len(versioned) > 20, versioned
    versions = _data_versions(home, versioned)
    assert [key for key, (_, given) in versions.items() if given != "true"] == [], "steps that report no data version of their own"
    # The history, and what counts its rows (the exports' listing, the dictionary), hold one more row each run.
    versioned = [key for key in versioned if key not in GROWS]
    # What a renamed or removed dbt model leaves behind (its old table or view): the second run drops
    # it, though it keeps every model (nothing dbt reads changed), so the snapshot is the first's.
    with duckdb.connect(str(data_dir / "warehouse.duckdb")) as con:
        con.execute("create table intermediate.int_renamed_away as select 1 as id")
        con.execute("create view marts.fct_removed as select 1 as id")
    started = time.monotonic()
    _run(["cli"], env, "second")
    # `make run` asks Dagster before the audits' run and finds them fresh; materialized again here.
    assert "none stale or missing per Dagster: not run" in (ARTIFACTS / "idempotency_second.log").read_text()
    _run(["audits"], env, "second_audits")
    timings["second"] = time.monotonic() - started
    runs_after = _materialization_runs(home, selected)
    assert [key for key in selected if len(runs_after[key]) < 2] == [], "assets not materialized again"
    second = _snapshot(data_dir, small_base_run / "data")
    problems = _compare("second make run", first, second)
    assert _log(data_dir) == (log_rows + 1, moved)  # the second run's refresh, which moved nothing
    changed = {key: pair for key, pair in _data_versions(home, versioned).items() if pair != versions[key]}
    assert changed == {}, "the same content, another data version"

    # The sensor's job for one benchmark: its rows are deleted and inserted again (so they now sit
    # after the other benchmarks' rows). Their content is the same, so dbt keeps the models (its
    # key hashes each source table independently of row order) and analysis keeps its tables.
    started = time.monotonic()
    _run(["refresh", REFRESHED], env, "refresh")
    timings["refresh"] = time.monotonic() - started
    third = _snapshot(data_dir, small_base_run / "data")
    problems += _compare(f"refresh of {REFRESHED}", first, third)
    assert _log(data_dir) == (log_rows + 2, moved)

    # The data lives in the warehouse: with the Dagster instance wiped (every materialization and
    # partition gone), `make run` leaves the same tables and files, and the history whole.
    history = _history_hash(data_dir, log_rows + 2)
    shutil.rmtree(home)
    started = time.monotonic()
    _run(["cli"], env, "wiped")
    timings["wiped home"] = time.monotonic() - started
    problems += _compare("make run after wiping dagster_home", first, _snapshot(data_dir, small_base_run / "data"))
    assert _log(data_dir) == (log_rows + 3, moved)
    assert _history_hash(data_dir, log_rows + 2) == history, "rows of the coverage history changed when dagster_home was wiped"
    changed = {key: pair for key, pair in _data_versions(home, versioned).items() if pair != versions[key]}
    assert changed == {}, "after the wipe, the same content and another data version"
    print(f"timings {', '.join(f'{k} {v:.0f} s' for k, v in timings.items())}; {len(tables)} tables and views; not an asset's own table: {unowned}")
    assert problems == [], "materialized again, these changed:\n" + "\n".join(problems)
