"""Two runs at once on one warehouse: a multiprocess backfill of the benchmark partitions and a
second run (`make run`), each in its own process, end with no DuckDB lock error and the tables of a
serial run.

What races: DuckDB lets one process open the file read-write and then no other process may open
it at all (IOException "Could not set lock on file ... Conflicting lock is held"). Two safeguards:

* every asset that touches the warehouse is in pool `warehouse`, limit 1 in the instance's
  dagster.yaml (dagster_instance.DAGSTER_YAML). Both the in-process and the multiprocess executor claim a
  slot of the pool from the instance's storage before a step starts, so warehouse steps of
  different runs and processes never overlap (asserted below from the event log). The
  per-benchmark steps never open the warehouse (they write their own files) and are in pool
  `partitions`, also limited to 1 here;
* warehouse.connect retries on a lock for up to LOCK_WAIT_SECONDS (the webserver's reader, a
  notebook: whatever does not take a slot). dbt's own connection does not retry: it relies on the
  pool.

The test exercises both. The runs share one instance whose dagster.yaml sets the pool, and the
test asserts that some step waited for it and that no more steps of one pool than its slots ran at
once (warehouse: 1). And
while the runs start, the test itself holds the warehouse open (as a notebook would, outside any
pool) until their first step has started and a few seconds more: that step must wait in
warehouse.connect and succeed once the file is free.

Negative controls (each must make this test fail): WORKBANK_TEST_WITHOUT_POOL=1 writes a
dagster.yaml without `concurrency`; WORKBANK_TEST_LOCK_WAIT_SECONDS=0 removes the retry in the run
processes (concurrency_run.py). Measured: without the pool, steps of the two runs overlap (the
assertions below fail; the retry alone still avoids a lock error); without the retry, the step that
meets the held file fails with the lock error; without both, both runs fail with it within 30 s.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
import warehouse_snapshot as snap
from concurrency_run import pipeline_env
from conftest import ARTIFACTS, SMALL
from step_events import step_intervals

from workbank_dagster import dagster_instance, runner
from workbank_dagster.settings import REPO_ROOT

HELPER = REPO_ROOT / "tests" / "support" / "concurrency_run.py"
# The multiprocess run: the backfill of the benchmark partitions and what the labels need.
BACKFILL = (
    "raw/onet_task_statements",
    "raw/onet_occupations",
    "raw/onet_alternate_titles",
    "raw/onet_reported_titles",
    "raw/onet_technology_skills",
    "raw/onet_task_dwas",
    "labeling/task_index",
    "labeling/occupation_prior",
    "raw/benchmark_prompts",
    "raw/benchmark_results",
    "labeling/embedded_labels",
    "labeling/embedded_judgements",
)
LOCK_ERRORS = ("could not set lock", "conflicting lock", "lock on file")
TIMEOUT = 600
HOLD_SECONDS = 4.0  # how long the test keeps the warehouse open after the first step has started


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    handle = log.open("w")
    # Its own session, so that on a time-out the step processes it started go too.
    process = subprocess.Popen([sys.executable, str(HELPER), *args], cwd=REPO_ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    handle.close()
    return process


def _hold_warehouse_while_runs_start(db: Path, processes: dict[str, subprocess.Popen], logs: dict[str, Path], warehouse_steps: set[str]) -> float:
    """Hold `db` open read-write until a run has started a step of pool `warehouse` (one that opens
    the file: it must wait for the lock), then HOLD_SECONDS more; the release time. Waiting for any
    step was not enough: on a loaded machine the first steps (partition steps, which never open the
    file) could start and finish inside the hold, and no step met the lock."""
    import duckdb

    started = re.compile(r'Started execution of step "([^"]+)"')
    db.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db))
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and all(p.poll() is None for p in processes.values()):
            texts = [path.read_text(errors="replace") for path in logs.values() if path.exists()]
            if any(step in warehouse_steps for text in texts for step in started.findall(text)):
                break
            time.sleep(0.1)
        time.sleep(HOLD_SECONDS)
    finally:
        con.close()
    return time.time()


def _wait(processes: dict[str, subprocess.Popen], logs: dict[str, Path], deadline: float) -> dict[str, int]:
    codes = {}
    try:
        for name, process in processes.items():
            codes[name] = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        tails = {name: logs[name].read_text()[-3000:] for name in processes}
        pytest.fail(f"runs did not finish in {TIMEOUT} s (a leaked pool slot blocks every run):\n" + "\n".join(f"--- {n}\n{t}" for n, t in tails.items()))
    finally:
        for process in processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(30)
    return codes


def _step_intervals(home: Path) -> tuple[list[tuple[float, float, str, str]], dict[str, str]]:
    """(start, end, run, step) of every step of every run in the instance, and each run's trigger."""
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        runs = instance.get_runs()
        triggers = {run.run_id: f"{run.job_name}:{run.tags.get('workbank/trigger', '')}" for run in runs}
        return step_intervals(instance, [run.run_id for run in runs]), triggers
    finally:
        instance.dispose()


def _pool_limits(home: Path) -> dict[str, int]:
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        return {pool: instance.event_log_storage.get_concurrency_info(pool).slot_count for pool in ("warehouse", "partitions")}
    finally:
        instance.dispose()


def _most_at_once(intervals: list[tuple[float, float, str, str]]) -> int:
    """The most of these (start, end, run, step) intervals open at one instant (an end before a start at the same time)."""
    edges = sorted([(start, 1) for start, *_ in intervals] + [(end, -1) for _, end, *_ in intervals], key=lambda e: (e[0], e[1]))
    running = most = 0
    for _, change in edges:
        running += change
        most = max(most, running)
    return most


# The steps in no pool: they observe the source files (hash them) and touch neither the warehouse
# nor a partition's files; Dagster's observable source assets take no pool.
UNPOOLED = {"files__observed", "files__benchmark_prompts", "files__benchmark_results"}


def _pool_of_step() -> dict[str, str]:
    """The pool of each step (op) of the jobs that run here, but the observation of the source files."""
    from workbank_dagster.definitions import defs

    pools = {node.definition.name: node.definition.pool for job in ("all_assets", "user_audits") for node in defs.resolve_job_def(job).graph.nodes}
    assert {name for name, pool in pools.items() if pool is None} == UNPOOLED, pools
    return {name: pool for name, pool in pools.items() if name not in UNPOOLED}


def test_multiprocess_backfill_and_second_run_at_once_match_a_serial_run(tmp_path, small_base_run, session_cache):
    from workbank_dagster.transform.project import ensure_manifest

    ensure_manifest()  # parse dbt once here, not in each of the processes started below
    pool_of = _pool_of_step()
    assert set(pool_of.values()) == {"warehouse", "partitions"}, "every step that runs here must be in pool `warehouse` or `partitions`"
    # Serial: `make run` alone, from an empty folder, on SMALL: the session's small base run (read
    # here, never written). The concurrent runs read the same source folder.
    serial_root = small_base_run
    sources = small_base_run / "sources"

    # Concurrent: the same sources, one instance with the pool configured, two processes.
    root = tmp_path / "concurrent"
    home = root / "dagster_home"
    home.mkdir(parents=True)
    without_pool = os.environ.get("WORKBANK_TEST_WITHOUT_POOL") == "1"  # negative control only
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n" if without_pool else dagster_instance.DAGSTER_YAML)
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        assert instance.event_log_storage.supports_global_concurrency_limits
        assert without_pool or instance.event_log_storage.get_pool_config().default_pool_limit == 1
        runner.sync_dynamic_partitions(instance, "benchmarks", SMALL)
    finally:
        instance.dispose()
    env = pipeline_env(root, sources, session_cache)
    logs = {"backfill": root / "backfill.log", "make_run": root / "make_run.log"}
    concurrent_started = time.monotonic()
    processes = {
        "backfill": _start(["multiprocess", "2", *BACKFILL], env, logs["backfill"]),
        "make_run": _start(["cli"], env, logs["make_run"]),
    }
    deadline = time.monotonic() + TIMEOUT
    warehouse_steps = {step for step, pool in pool_of.items() if pool == "warehouse"}
    released = _hold_warehouse_while_runs_start(root / "data" / "warehouse.duckdb", processes, logs, warehouse_steps)
    codes = _wait(processes, logs, deadline)
    concurrent_seconds = time.monotonic() - concurrent_started
    texts = {name: path.read_text() for name, path in logs.items()}
    for name, text in texts.items():
        (ARTIFACTS / f"concurrency_{name}.log").write_text(text)
    assert codes == {"backfill": 0, "make_run": 0}, {n: t[-4000:] for n, t in texts.items() if codes[n]}
    assert "succeeded (multiprocess, 3 partitions)" in texts["backfill"]
    assert "Executing steps using multiprocess executor" in texts["backfill"]
    compute_logs = [p.read_text(errors="replace") for p in (home / "storage").rglob("*") if p.is_file() and p.suffix in (".out", ".err")]
    for text in [*texts.values(), *compute_logs]:
        lowered = text.lower()
        assert not any(marker in lowered for marker in LOCK_ERRORS), [line for line in text.splitlines() if "lock" in line.lower()][:5]

    # They did run at the same time, and each pool kept its steps apart: no two steps of one pool
    # (any run) overlap in time.
    intervals, triggers = _step_intervals(home)
    by_trigger = {trigger: run for run, trigger in triggers.items()}
    assert set(by_trigger) == {"all_assets:test multiprocess", "all_assets:make run", "user_audits:make run"}, triggers
    span = {run: (min(s for s, _, r, _ in intervals if r == run), max(e for _, e, r, _ in intervals if r == run)) for run in triggers}
    backfill_run, make_run = by_trigger["all_assets:test multiprocess"], by_trigger["all_assets:make run"]
    assert span[backfill_run][0] < span[make_run][1] and span[make_run][0] < span[backfill_run][1], "the two runs did not overlap"
    # `make run` (cli run) gave pool `partitions` its slots (the setting partition_workers, 2): up to
    # two of its steps may run at once, never more; `warehouse` keeps one.
    limits = _pool_limits(home)
    assert limits == {"warehouse": 1, "partitions": 2}, limits
    for pool, limit in limits.items():
        mine = [interval for interval in intervals if pool_of.get(interval[3]) == pool]
        assert mine, f"no step of pool {pool} ran"
        at_once = _most_at_once(mine)
        assert at_once <= limit, f"{at_once} steps of pool {pool} ran at the same time (limit {limit})"
    waited = any("blocked by limit for pool warehouse" in text for text in texts.values())
    assert waited, "no step ever waited for the pool: nothing raced"
    # A step was running while the test held the file: it waited for the lock and then succeeded.
    assert any(start < released - 1.0 and end > released for start, end, _, step in intervals if step in warehouse_steps), "no step met the held lock"

    # The same tables, the same outputs as the serial run.
    first = snap.warehouse_hashes(serial_root / "data" / "warehouse.duckdb")
    second = snap.warehouse_hashes(root / "data" / "warehouse.duckdb")
    assert set(first["canonical"]) == set(second["canonical"])
    assert len(first["canonical"]) > 40 and {name.split(".")[0] for name in first["canonical"]} >= {"raw", "labeling", "staging", "intermediate", "marts", "analysis"}
    assert snap.differences(first["canonical"], second["canonical"]) == []
    files_first = snap.file_hashes(serial_root / "data" / "outputs", serial_root / "data")
    files_second = snap.file_hashes(root / "data" / "outputs", root / "data")
    assert "headline.json" in files_first["canonical"]
    assert snap.differences(files_first["canonical"], files_second["canonical"]) == []
    snap.report_exact_differences("concurrent vs serial, tables", first["exact"], second["exact"], ARTIFACTS / "concurrency_exact_tables.json")
    snap.report_exact_differences("concurrent vs serial, files", files_first["exact"], files_second["exact"], ARTIFACTS / "concurrency_exact_files.json")
    print(f"concurrent {concurrent_seconds:.0f} s, {len(intervals)} steps in {len(triggers)} runs")
