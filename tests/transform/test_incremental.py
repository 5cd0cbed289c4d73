"""The dbt models over per-benchmark tables are incremental by benchmark (dbt_project/macros/by_benchmark.sql).

From a copy of the session's small run (three real benchmarks, their real labels), synthetic
benchmarks drawn from its files (bench/synthetic_corpus.py) arrive; then one benchmark is added,
one changed and one removed, each followed by an incremental `dbt build` (the pipeline's own
arguments). After each, every table dbt builds equals, canonically, what `dbt build --full-refresh`
makes of the same files on a copy; the incremental models keep their tables (dbt did not rebuild
them), the staging models read the changed benchmark's files only, and the marts over them are views
(a mart that copied them cost a scan of every row on each refresh).

dbt runs alone here (no Dagster run): what the pipeline adds, a full refresh when the project
changed and `cli run --full-refresh`, is tested without dbt below.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd
import warehouse_snapshot as snap
from conftest import copy_small_run

from workbank_dagster.common import file_sha256
from workbank_dagster.partition_files import FILE_HASHES, READING, PartitionFiles
from workbank_dagster.runner import full_run_config
from workbank_dagster.settings import REPO_ROOT, PipelineSettings
from workbank_dagster.transform.assets import needs_full_refresh
from workbank_dagster.transform.project import DBT_PROJECT_DIR, dbt_build_args, dbt_executable, dbt_vars_args, profiles_dir_for

sys.path.insert(0, str(REPO_ROOT / "bench"))
from synthetic_corpus import generate, read_profile, write_benchmark  # noqa: E402

DBT_SCHEMAS = ("staging", "intermediate", "marts")
STAGING_OVER_FILES = {
    "stg_benchmarks__prompts": "benchmark_prompts",
    "stg_benchmarks__results": "benchmark_results",
    "stg_labeling__embedded_labels": "embedded_labels",
    "stg_labeling__embedded_judgements": "embedded_judgements",
}
INCREMENTAL = (*(f"staging.{name}" for name in STAGING_OVER_FILES), "intermediate.int_benchmark_prompt_stats")
# The marts over those staging tables select, union and filter their rows: views, with nothing to rebuild.
MARTS_OVER_STAGING = (
    "marts.fct_benchmark_prompts",
    "marts.fct_benchmark_results",
    "marts.fct_prompt_candidates",
    "marts.fct_prompt_judgements",
    "marts.fct_prompt_task_labels_all_labelers",
    "marts.fct_prompt_task_labels",
)


def _run_dbt(data: Path, target: Path, args: list[str]) -> subprocess.CompletedProcess:
    """dbt with `args` on the warehouse and partition files of `data`, as the dbt_models step runs it."""
    settings = PipelineSettings.of(data_dir=str(data)).resolve()
    return subprocess.run(
        [dbt_executable(), *args, "--project-dir", str(DBT_PROJECT_DIR), "--profiles-dir", str(profiles_dir_for(settings)), "--target-path", str(target)],
        cwd=DBT_PROJECT_DIR, env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}, capture_output=True, text=True,
    )


def _dbt(data: Path, target: Path, *, full_refresh: bool = False) -> None:
    """`dbt build` as the dbt_models step runs it."""
    completed = _run_dbt(data, target, dbt_build_args(PipelineSettings.of(data_dir=str(data)).resolve(), full_refresh=full_refresh))
    assert completed.returncode == 0, completed.stdout[-4000:]


def _tables(data: Path) -> dict[str, str]:
    hashes = snap.warehouse_hashes(data / "warehouse.duckdb")["canonical"]
    return {name: digest for name, digest in hashes.items() if name.split(".")[0] in DBT_SCHEMAS}


def _table_oids(data: Path) -> dict[str, int]:
    con = duckdb.connect(str(data / "warehouse.duckdb"), read_only=True)
    try:
        return {f"{schema}.{name}": oid for schema, name, oid in con.execute("select schema_name, table_name, table_oid from duckdb_tables()").fetchall()}
    finally:
        con.close()


def _read_by(target: Path, model: str) -> str:
    """The SQL dbt ran to build `model` (its compiled select) in the last build into `target`."""
    return (target / "compiled" / "workbank" / "models" / "staging" / f"{model}.sql").read_text()


def test_incremental_builds_after_add_change_remove_equal_a_full_rebuild(tmp_path, small_base_run, session_cache):
    root = tmp_path / "run"
    copy_small_run(small_base_run, root, session_cache)
    data = root / "data"
    files = PartitionFiles(data / "partitions")
    profile = read_profile(files.root)  # the small run's three real benchmarks are the templates
    generate(files.root, profile, 3, 150, seed=3)
    target = tmp_path / "target"
    _dbt(data, target)  # the synthetic benchmarks arrive beside the real ones
    steps = {
        "add": ("added", lambda: write_benchmark(files, profile, "added", 90, seed=3)),
        "change": ("syn-00001", lambda: write_benchmark(files, profile, "syn-00001", 150, seed=3, version=2)),
        "remove": ("syn-00002", lambda: [files.remove(table, "syn-00002") for table in profile.tables]),
    }
    for step, (slug, change) in steps.items():
        oids = _table_oids(data)
        change()
        _dbt(data, target)
        rebuilt = tmp_path / f"rebuilt-{step}"
        shutil.copytree(data, rebuilt, ignore=shutil.ignore_patterns("dagster_home", "outputs", "cache"))
        _dbt(rebuilt, tmp_path / f"target-{step}", full_refresh=True)
        incremental, full = _tables(data), _tables(rebuilt)
        assert snap.differences(incremental, full) == [], step
        assert set(incremental) >= set(INCREMENTAL)
        kinds = snap.warehouse_tables(data / "warehouse.duckdb")
        assert {name: kinds.get(name) for name in MARTS_OVER_STAGING} == dict.fromkeys(MARTS_OVER_STAGING, "VIEW"), step
        assert {name: oid for name, oid in _table_oids(data).items() if name in INCREMENTAL} == {name: oids[name] for name in INCREMENTAL}, step
        for model, table in STAGING_OVER_FILES.items():  # the changed benchmark's file read, no other (a file without rows is not)
            read = _read_by(target, model)
            for other in {*files.partitions(table)} - {slug}:
                assert str(files.path(table, other)) not in read, (step, model, other)
            if step != "remove" and files.path(table, slug).is_file() and len(pd.read_parquet(files.path(table, slug))):
                assert str(files.path(table, slug)) in read, (step, model)
    con = duckdb.connect(str(data / "warehouse.duckdb"), read_only=True)
    try:
        benchmarks = {row[0] for row in con.execute("select distinct benchmark from marts.fct_benchmark_prompts").fetchall()}
    finally:
        con.close()
    assert {"added", "syn-00000", "syn-00001"} <= benchmarks and "syn-00002" not in benchmarks


def test_the_staging_models_take_each_files_kept_hash_while_it_still_matches(tmp_path, small_base_run, session_cache):
    """The pipeline keeps every partition file's SHA-256 (partition_files.FILE_HASHES) and the staging
    models record it instead of hashing the file's bytes again, but only while the file's size and
    modification time are those it was hashed at: a file written since is hashed by DuckDB, with
    SHA-256 too, so the same bytes get the same hash whichever way it came."""
    root = tmp_path / "run"
    copy_small_run(small_base_run, root, session_cache)
    data = root / "data"
    files = PartitionFiles(data / "partitions")
    stamp = time.time() - 60  # past the racy window: every file's hash is kept
    for path in files.root.rglob("*.parquet"):
        os.utime(path, (stamp, stamp))
    files.file_sha256s(STAGING_OVER_FILES.values())
    kept = pd.read_parquet(files.root / FILE_HASHES)
    planted, rewritten = files.partitions("benchmark_prompts")[:2]
    for benchmark, value in ((planted, "planted"), (rewritten, "stale")):
        kept.loc[(kept["table_name"] == "benchmark_prompts") & (kept["file_name"] == f"{benchmark}.parquet"), "sha256"] = value
    kept.to_parquet(files.root / FILE_HASHES, index=False)
    rewritten_path = files.path("benchmark_prompts", rewritten)
    files.write("benchmark_prompts", rewritten, pd.read_parquet(rewritten_path))  # the same rows, written again: another time
    _dbt(data, tmp_path / "target", full_refresh=True)
    con = duckdb.connect(str(data / "warehouse.duckdb"), read_only=True)
    try:
        recorded = dict(con.execute("select distinct benchmark, source_file_hash from staging.stg_benchmarks__prompts").fetchall())
    finally:
        con.close()
    assert recorded[planted] == "planted"
    assert recorded[rewritten] == file_sha256(rewritten_path)  # not the kept "stale": read again, by DuckDB
    assert {benchmark: file_sha256(files.path("benchmark_prompts", benchmark)) for benchmark in recorded if benchmark != planted} == {
        benchmark: value for benchmark, value in recorded.items() if benchmark != planted
    }


def test_a_build_by_another_dbt_project_is_a_full_refresh():
    """The incremental models see which benchmarks' files changed, not an edited model, macro, test
    or var: a model last built by another project (or never, or by code that recorded none) makes
    the build a full refresh."""
    assert not needs_full_refresh(["p1", "p1"], "p1")
    assert needs_full_refresh(["p1", "p0"], "p1")
    assert needs_full_refresh(["p1", None], "p1")
    assert not needs_full_refresh([], "p1")


def test_a_full_rebuild_is_one_command(monkeypatch):
    """`cli run --full-refresh` runs everything with the dbt step asked for `dbt build --full-refresh`;
    a plain `cli run` does not ask for it."""
    from workbank_dagster import cli, runner

    asked = []
    monkeypatch.setattr(runner, "run_all", lambda full_refresh=False: asked.append(full_refresh) or 0)
    assert cli.main(["run", "--full-refresh"]) == 0 and cli.main(["run"]) == 0
    assert asked == [True, False]
    assert full_run_config(full_refresh=True)["ops"] == {"dbt_models": {"config": {"full_refresh": True}}}
    assert "ops" not in full_run_config()
    settings = PipelineSettings.of(data_dir="data").resolve()
    assert "--full-refresh" in dbt_build_args(settings, full_refresh=True) and "--full-refresh" not in dbt_build_args(settings)


def test_the_uniqueness_test_finds_a_duplicated_row(tmp_path, small_base_run, session_cache):
    """unique_combination_of_columns (macros/test_unique_combination.sql) groups by a hash of the
    combination before the columns: a label row written twice still fails it, naming that row."""
    copy_small_run(small_base_run, tmp_path, session_cache)
    data = tmp_path / "data"
    settings = PipelineSettings.of(data_dir=str(data)).resolve()
    con = duckdb.connect(str(data / "warehouse.duckdb"))
    try:
        benchmark, prompt_id, task_id = con.execute(
            "insert into staging.stg_labeling__embedded_labels select * from staging.stg_labeling__embedded_labels "
            "order by benchmark, prompt_id, task_id limit 1 returning benchmark, prompt_id, task_id"
        ).fetchone()
    finally:
        con.close()
    select = "test_name:unique_combination_of_columns,fct_prompt_task_labels"
    completed = _run_dbt(data, tmp_path / "target", ["test", *dbt_vars_args(settings), "--exclude-resource-type", "unit_test", "--select", select, "--store-failures"])
    assert completed.returncode != 0 and "FAIL 1 unique_combination_of_columns_fct_prompt_task_labels" in completed.stdout, completed.stdout[-3000:]
    con = duckdb.connect(str(data / "warehouse.duckdb"), read_only=True)
    try:
        # dbt stores the failing rows in its audit schema, the test's name shortened to a hash
        failures = [name for (name,) in con.execute("select table_schema || '.' || table_name from information_schema.tables where table_schema like '%dbt_test__audit'").fetchall()]
        assert len(failures) == 1
        assert con.execute(f"select benchmark, prompt_id, task_id, n from {failures[0]}").fetchall() == [(benchmark, prompt_id, task_id, 2)]
    finally:
        con.close()


BUILD_ALONE = """
import sys
from workbank_dagster import dagster_instance, runner
from workbank_dagster.transform.assets import dbt_models
result = runner.launch(runner.get_warehouse_job, dagster_instance.open_instance(), {"workbank/trigger": "test"},
                       runner.full_run_config(full_refresh=True), asset_selection=list(dbt_models.keys))
sys.exit(0 if result.success else 1)
"""


def test_a_build_while_a_partition_run_rewrites_a_file_reads_one_version_of_it(tmp_path, small_base_run, session_cache):
    """The dbt_models step reads every partition file in many queries over many seconds, each query
    opening a file more than once, while partition runs of other benchmarks write theirs (a backfill
    beside `make run`). Here one benchmark's judgements file is renamed over again and again, in
    two versions, during a full-refresh build. The build passes, and the staging table holds one of
    the two versions whole, with that version's file hash."""
    import threading

    root = tmp_path / "run"
    _, env = copy_small_run(small_base_run, root, session_cache)
    files = PartitionFiles(root / "data" / "partitions")
    table, benchmark = "embedded_judgements", files.partitions("embedded_judgements")[0]
    whole = pd.read_parquet(files.path(table, benchmark))
    shorter = whole.iloc[:-1]
    versions = {}
    for name, frame in (("shorter", shorter), ("whole", whole)):
        versions[file_sha256(files.write(table, benchmark, frame))] = name
    stop = threading.Event()

    def rewrite():
        while not stop.is_set():
            for frame in (shorter, whole):
                files.write(table, benchmark, frame)
                time.sleep(0.002)

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        completed = subprocess.run([sys.executable, "-c", BUILD_ALONE], cwd=REPO_ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=900)
    finally:
        stop.set()
        writer.join()
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-5000:]
    con = duckdb.connect(str(root / "data" / "warehouse.duckdb"), read_only=True)
    try:
        staged = con.execute(
            "select source_file_hash, count(*) from staging.stg_labeling__embedded_judgements where benchmark = ? group by 1", [benchmark]
        ).fetchall()
    finally:
        con.close()
    assert len(staged) == 1, staged
    (file_hash, rows), = staged
    assert file_hash in versions, (file_hash, versions)
    assert rows == {"shorter": len(shorter), "whole": len(whole)}[versions[file_hash]]
    # dbt read the links the step froze (PartitionFiles.frozen), which it deleted once dbt was done.
    compiled = [path.read_text() for path in DBT_PROJECT_DIR.glob("target/dbt_models-*/compiled/workbank/models/staging/stg_labeling__embedded_judgements.sql")]
    read = [sql for sql in compiled if str(root) in sql]
    assert len(read) == 1 and f"{files.root / READING}/dbt-" in read[0], read
    assert not any((files.root / READING).iterdir())
