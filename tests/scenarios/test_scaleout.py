"""#18, the test that proves it (marker `scaleout`): two backfills at once on the team instance.

The team instance as `make ui-team` runs it (`cli team ui`: the project's own PostgreSQL cluster,
then `dagster dev`'s webserver and daemon over it, with the QueuedRunCoordinator and the pools), on
127.0.0.1 and free ports, in a /tmp folder PostgreSQL's unprivileged user can reach. The data
folder is a copy of the session's serial run on the three small benchmarks (`small_base_run`) with
the O*NET sources loaded (the warehouse's raw tables, the task index's files, the prior) but no
per-benchmark file and no output: what a team has before it backfills its benchmarks, and the
instance is new, so no partition is materialized in it.

1. The benchmark partitions are added (GraphQL `addDynamicPartition`), the sources are loaded on the
   new instance as `make run` loads them (one run: raw/source_files publishes the files recorded in
   their materializations, so without it the data versions would differ from the serial run's),
   and two backfills over disjoint benchmarks (BACKFILLS) are launched at once, from two threads,
   through the webserver's GraphQL API (`launchPartitionBackfill` on job `benchmark_partitions`'s
   partition set); the daemon's backfill loop submits their runs, its run queue starts them.
   A start gate: pool `partitions` has no slot until both backfills' runs wait at their first
   step, then its two. A run's process takes 5-10 s to start on 2 cores and its partition steps
   here 2-3 s, so without the gate whether the two meet would be the start-up's luck.
2. Every run succeeds: one per backfill (the per-benchmark assets have the single-run backfill
   policy: one run over the backfill's benchmarks, tagged with its backfill), and one `warehouse` run.
3. Steps of the two backfills (pool `partitions`, two slots) overlap in time: from the step events
   in the PostgreSQL event log, the time during which both backfills had a step running.
4. The `warehouse` pool never holds more than one step: the slots claimed, sampled every half second
   while the runs go, and the warehouse steps' intervals in the event log.
5. No lock error (DuckDB's "could not set lock", "conflicting lock"; SQLite's "database is locked")
   in any run's events, step logs or the services' log.
6. The `warehouse` run was started by the sensor `warehouse_after_partitions` through the daemon
   (which evaluates it every 10 s, its minimum_interval_seconds), after the last partition run ended, and materialized every asset of its job; the final marts,
   analysis tables, headline and output files, and the per-benchmark files, are canonically equal
   to the serial run's (warehouse_snapshot.py).
   Then the instance is stopped by SIGTERM to `cli team ui`, which must exit 0 leaving no process.

The file sensor `benchmark_files_sensor` would, on its first tick in a new instance, request a
partition run per benchmark it finds unmaterialized: the same runs as the backfills, by another
route. So the benchmark folder is empty while the daemon starts, and the test stops that sensor
through GraphQL (`stopSensor`) once its first tick has ended, and sees it stay stopped (two ticks of
the 10 s sensor later) before the benchmark files come back: every partition run here is a
backfill's, and the test checks that the file sensor made no tick after its stop.

Measured (2 cores, alone, 2026-12-04): 145 s; overlap of the two backfills' partition steps 2.0 s
(pool `partitions` peak 2, sampled and from the events), pool `warehouse` peak 1, the warehouse run
created 6.4 s after the last partition run ended. The control: 8 s, DuckDB's lock error.

Negative control (the second test): the same load, two writers of the warehouse at once, on one
DuckDB file with pool `warehouse` raised to 2 and the lock retry off
(WORKBANK_TEST_LOCK_WAIT_SECONDS=0): two `warehouse` runs in two processes on a SQLite instance. One
meets the other's lock and fails, and the scan the first test uses finds the lock error.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dagster as dg
import pytest
import warehouse_snapshot as snap
from concurrency_run import pipeline_env
from conftest import ARTIFACTS, SMALL, copy_small_run
from step_events import step_intervals
from team_service import free_port, graphql, processes_naming, webserver_up

from workbank_dagster import dagster_instance
from workbank_dagster.settings import REPO_ROOT

pytestmark = pytest.mark.scaleout

BACKFILLS = (("cybench",), ("finance-agent", "paperbench"))  # disjoint; together SMALL, the serial run's benchmarks
PARTITION_TABLES = ("benchmark_prompts", "benchmark_results", "embedded_labels", "embedded_judgements")
LOCK_ERRORS = ("could not set lock", "conflicting lock", "lock on file", "database is locked")
TIMEOUT = 300  # from the launch to the warehouse run's end; it takes about a minute on 2 cores
HELPER = REPO_ROOT / "tests" / "support" / "concurrency_run.py"
FINISHED = (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)

REPOSITORIES = "{ repositoriesOrError { __typename ... on RepositoryConnection { nodes { name location { name } } } ... on Error { message } } }"
SENSOR = """query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { __typename
  ... on Sensor { minIntervalSeconds sensorState { id status ticks(limit: 1) { status } } } ... on Error { message } } }"""
TICKS = """query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { __typename
  ... on Sensor { sensorState { status ticks(limit: 20) { status timestamp runIds } } } ... on Error { message } } }"""
TICKS_WITH_RUNS = """query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { __typename
  ... on Sensor { sensorState { ticks(limit: 1000, statuses: [SUCCESS]) { runIds } } } ... on Error { message } } }"""
STOP_SENSOR = """mutation($id: String!) { stopSensor(id: $id) { __typename
  ... on StopSensorMutationResult { instigationState { status } } ... on Error { message } } }"""
ADD_PARTITION = """mutation($r: RepositorySelector!, $p: String!, $k: String!) {
  addDynamicPartition(repositorySelector: $r, partitionsDefName: $p, partitionKey: $k) { __typename
    ... on AddDynamicPartitionSuccess { partitionKey } ... on Error { message } } }"""
LAUNCH_BACKFILL = """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) { __typename
  ... on LaunchBackfillSuccess { backfillId } ... on Error { message } } }"""


@pytest.fixture()
def team_root():
    """A folder PostgreSQL's user can reach (pytest's own are private to root), removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="workbank-scaleout-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _lock_hits(texts: dict[str, str]) -> list[str]:
    """Each lock error in `texts` (name -> text), as the name and the text around it."""
    hits = []
    for name, text in texts.items():
        lowered = text.lower()
        for marker in LOCK_ERRORS:
            start = lowered.find(marker)
            if start >= 0:
                hits.append(f"{name}: …{text[max(0, start - 120):start + 120]}…")
    return hits


def _run_texts(instance, run_ids) -> dict[str, str]:
    """Every event of each run, serialized whole (messages, errors and their causes)."""
    return {f"run {run_id}": "\n".join(dg.serialize_value(record) for record in instance.all_logs(run_id)) for run_id in run_ids}


def _file_texts(*folders: Path) -> dict[str, str]:
    return {str(path): path.read_text(errors="replace") for folder in folders if folder.exists() for path in sorted(folder.rglob("*")) if path.is_file()}


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _overlap_seconds(first: list[tuple[float, float]], second: list[tuple[float, float]]) -> float:
    """How long some span of `first` and some span of `second` ran at the same time."""
    return sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in _merged(first) for s2, e2 in _merged(second))


def _peak(spans: list[tuple[float, float]]) -> int:
    """The most spans open at one instant."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans], key=lambda e: (e[0], e[1]))
    peak = level = 0
    for _, step in events:
        level += step
        peak = max(peak, level)
    return peak


def _ticks_ended(ticks: list[dict]) -> bool:
    """At least one tick, and none still under way."""
    return bool(ticks) and all(tick["status"] != "STARTED" for tick in ticks)


def _partitions_of(run: dg.DagsterRun) -> list[str]:
    """The benchmarks a partition run covers: its partition, or its range (single-run backfill
    policy) in the order the test added them (SMALL)."""
    if run.tags.get("dagster/partition"):
        return [run.tags["dagster/partition"]]
    start, end = run.tags.get("dagster/asset_partition_range_start"), run.tags.get("dagster/asset_partition_range_end")
    if start not in SMALL or end not in SMALL:
        return []
    return list(SMALL[SMALL.index(start) : SMALL.index(end) + 1])


def _pool_of_step() -> dict[str, str]:
    from workbank_dagster.definitions import defs

    return {node.definition.name: node.definition.pool for job in ("all_assets", "benchmark_partitions", "warehouse") for node in defs.resolve_job_def(job).graph.nodes}


def _source_keys() -> list[str]:
    """What `make run` loads that neither job does: the sources (O*NET and the rest), the task index, the prior."""
    from workbank_dagster.definitions import defs

    keys = {job: defs.resolve_job_def(job).asset_layer.selected_asset_keys for job in ("all_assets", "benchmark_partitions", "warehouse")}
    return sorted(key.to_user_string() for key in keys["all_assets"] - keys["benchmark_partitions"] - keys["warehouse"])


def _warehouse_asset_keys() -> list[dg.AssetKey]:
    from workbank_dagster.definitions import defs

    return sorted(defs.resolve_job_def("warehouse").asset_layer.selected_asset_keys)


class _Services:
    """`cli team ui` started in a folder, and what the test waits for from it."""

    def __init__(self, root: Path, env: dict[str, str]):
        self.root, self.port, self.pg_port = root, free_port(), free_port()
        self.log = root / "ui.log"
        with open(self.log, "w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "workbank_dagster.cli", "team", "ui", "--port", str(self.port), "--postgres-port", str(self.pg_port)],
                cwd=REPO_ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def wait(self, condition, timeout: float, what: str, every: float = 0.5, state=None):
        """Until `condition()` is true; else fail with the log's tail, then what `state()` says of the
        instance (last, so that a shortened CI output, which keeps the end, still shows it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"`cli team ui` exited ({self.process.returncode}) before {what}:\n{self.tail()}")
            value = condition()
            if value:
                return value
            time.sleep(every)
        pytest.fail(f"no {what} after {timeout:.0f} s:\n{self.tail()}\n{state() if state else ''}")

    def stop(self) -> None:
        """SIGTERM, as Ctrl-C or a service manager would: `cli team ui` stops dagster dev, then the cluster."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=240)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(30)
            pytest.fail(f"`cli team ui` did not stop within 240 s of SIGTERM:\n{self.tail()}")

    def leftovers(self) -> list[str]:
        return processes_naming(str(self.root), f"--port {self.port}", f"-p {self.port}", f"-p {self.pg_port}")


def _prepare(root: Path, small_base_run: Path, session_cache: Path) -> tuple[Path, Path, dict[str, str]]:
    """The serial run's folders copied into `root`, less what the backfills and the warehouse job
    make (the per-benchmark files, the outputs) and less its SQLite instance; the benchmark files
    held aside (the caller brings them back); the environment of `cli team ui` there."""
    sources, _ = copy_small_run(small_base_run, root, session_cache)
    shutil.rmtree(root / "dagster_home")
    data = root / "data"
    for table in PARTITION_TABLES:
        shutil.rmtree(data / "partitions" / table)
    shutil.rmtree(data / "outputs")
    held = root / "held_benchmarks"
    (sources / "benchmarks").rename(held)
    (sources / "benchmarks").mkdir()
    (root / "audits").mkdir()  # no audit file: the audit sensor requests nothing (its tables are the copy's)
    env = {**pipeline_env(root, sources, session_cache), "WORKBANK_AUDITS_DIR": str(root / "audits")}
    env.pop("DAGSTER_HOME")  # the team instance has its own home, in the data folder
    return sources, held, env


def test_two_backfills_at_once_on_the_team_instance_match_a_serial_run(team_root, small_base_run, session_cache):
    from workbank_dagster.automation import benchmark_partitions_job
    from workbank_dagster.partitions import benchmarks_partitions
    from workbank_dagster.transform.project import ensure_manifest

    ensure_manifest()  # parsed once here, not by the code server and each run it starts
    assert sorted(b for backfill in BACKFILLS for b in backfill) == sorted(SMALL)
    pool_of = _pool_of_step()
    warehouse_keys = _warehouse_asset_keys()
    sources, held, env = _prepare(team_root, small_base_run, session_cache)
    data = team_root / "data"
    home = data / "dagster_home_team"
    seen: dict = {"pool_peak_sampled": {"warehouse": 0, "partitions": 0}}
    timings: dict[str, float] = {}
    began = time.monotonic()
    services = _Services(team_root, env)
    instance = None
    try:
        services.wait(lambda: webserver_up(services.port), 240, "webserver answering /server_info")
        timings["webserver_up"] = time.monotonic() - began

        def repository():
            try:
                nodes = graphql(services.port, REPOSITORIES)["repositoriesOrError"].get("nodes") or []
            except OSError:
                return None
            return nodes and {"repositoryName": nodes[0]["name"], "repositoryLocationName": nodes[0]["location"]["name"]}

        repo = services.wait(repository, 120, "code location loaded")

        def sensor(name: str, query: str = SENSOR) -> dict:
            found = graphql(services.port, query, {"s": {**repo, "sensorName": name}})["sensorOrError"]
            assert found["__typename"] == "Sensor", found
            return found

        # The file sensor off (module docstring), and off for good before the files return. The daemon
        # writes a sensor's state back as it read it when its loop began (dagster/_daemon/sensor.py,
        # mark_sensor_state_for_tick), so a stop landing between that read and the tick is undone and
        # the sensor ticks on: on CI once (stop 53), it then requested a run of every benchmark besides
        # the backfills'. So: the stop after the sensor's first tick (the folder empty: it requests
        # nothing) has ended, then held until two ticks of the 10 s sensor have begun after it (the
        # daemon has read the states again since), stopping again if it was undone.
        def stop_file_sensor() -> float:
            stopped = graphql(services.port, STOP_SENSOR, {"id": sensor("benchmark_files_sensor")["sensorState"]["id"]})["stopSensor"]
            assert stopped["__typename"] == "StopSensorMutationResult" and stopped["instigationState"]["status"] == "STOPPED", stopped
            return time.time()

        services.wait(lambda: _ticks_ended(sensor("benchmark_files_sensor", TICKS)["sensorState"]["ticks"]), 120, "the file sensor's first tick ended")
        file_sensor_stopped = [stop_file_sensor()]

        def stays_stopped() -> bool:
            files = sensor("benchmark_files_sensor", TICKS)["sensorState"]
            if files["status"] != "STOPPED":
                seen["file_sensor_restops"] = seen.get("file_sensor_restops", 0) + 1
                file_sensor_stopped.append(stop_file_sensor())
                return False
            since = [t for t in sensor("warehouse_after_partitions", TICKS)["sensorState"]["ticks"] if t["timestamp"] > file_sensor_stopped[-1]]
            return _ticks_ended(files["ticks"]) and len(since) >= 2

        services.wait(stays_stopped, 120, "the file sensor stopped for good")
        follower = sensor("warehouse_after_partitions")
        assert follower["sensorState"]["status"] == "RUNNING", follower
        seen["sensor_interval_seconds"] = follower["minIntervalSeconds"]
        for path in sorted(held.iterdir()):
            path.rename(sources / "benchmarks" / path.name)

        instance = dg.DagsterInstance.from_config(str(home))
        assert type(instance.run_storage).__name__ == "PostgresRunStorage" and type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert instance.get_runs() == [] and instance.get_materialized_partitions(dg.AssetKey(["raw", "benchmark_prompts"])) == set()
        limits = {limit.name: limit.limit for limit in instance.event_log_storage.get_pool_limits()}
        assert limits.get("warehouse") == 1 and limits.get("partitions") == 2, limits

        # 1. The partitions, then both backfills at once.
        for slug in SMALL:
            added = graphql(services.port, ADD_PARTITION, {"r": repo, "p": benchmarks_partitions.name, "k": slug})["addDynamicPartition"]
            assert added["__typename"] == "AddDynamicPartitionSuccess", added
        # The sources loaded on the new instance, as `make run` loads them (one run, in-process): what
        # raw/source_files publishes comes from their materializations, so the serial run's data
        # versions need them recorded here too. Not under test: it runs before the backfills.
        loaded = subprocess.run(
            [sys.executable, str(HELPER), "in_process", *_source_keys()], cwd=REPO_ROOT, env={**env, "DAGSTER_HOME": str(home)},
            capture_output=True, text=True, timeout=600,
        )
        (ARTIFACTS / "scaleout_sources.log").write_text(loaded.stdout + loaded.stderr)
        assert loaded.returncode == 0, loaded.stderr[-3000:]
        source_runs = {run.run_id for run in instance.get_runs()}
        timings["sources_loaded"] = time.monotonic() - began

        # The start gate: no `partitions` slot until both backfills' runs wait at their first step
        # (below). A run's process takes 5-10 s to start on 2 cores, its partition steps here 2-3 s,
        # so without the gate whether they meet would be the start-up's luck, not the pool's doing.
        instance.event_log_storage.set_concurrency_slots("partitions", 0)
        barrier = threading.Barrier(len(BACKFILLS))

        def launch(partitions: tuple[str, ...]) -> dict:
            params = {
                "selector": {"partitionSetName": f"{benchmark_partitions_job.name}_partition_set", "repositorySelector": repo},
                "partitionNames": list(partitions),
                "tags": [{"key": "workbank/trigger", "value": "test scaleout"}],
            }
            barrier.wait()
            return graphql(services.port, LAUNCH_BACKFILL, {"p": params})["launchPartitionBackfill"]

        launched_at = time.monotonic()
        with ThreadPoolExecutor(len(BACKFILLS)) as pool:
            launched = list(pool.map(launch, BACKFILLS))
        assert [result["__typename"] for result in launched] == ["LaunchBackfillSuccess"] * len(BACKFILLS), launched
        timings["launched"] = launched_at - began

        # 2. Until every partition run and the warehouse run have ended, sampling the pools' claimed slots.
        def sample() -> list[dg.DagsterRun]:
            infos = instance.event_log_storage.get_concurrency_infos(["warehouse", "partitions"])
            for pool, info in infos.items():
                seen["pool_peak_sampled"][pool] = max(seen["pool_peak_sampled"][pool], len(info.claimed_slots))
            runs = instance.get_runs()
            failed = [(run.job_name, run.run_id, run.status.value) for run in runs if run.status in FINISHED and run.status != dg.DagsterRunStatus.SUCCESS]
            if failed:
                pytest.fail(f"runs failed: {failed}\n{services.tail()}")
            seen["waiting_backfills"] = {run.tags.get("dagster/backfill") for run in runs if run.run_id in {s.run_id for s in infos["partitions"].pending_steps}}
            return runs

        def state() -> str:
            """Each run (job, benchmarks, status, trigger) and each pool's slots and waiting steps."""
            lines = ["runs:"] + [
                f"  {run.job_name} {','.join(_partitions_of(run))} {run.status.value} {run.tags.get('dagster/backfill') or run.tags.get('dagster/sensor_name', '')}"
                for run in instance.get_runs()
            ]
            for pool, info in instance.event_log_storage.get_concurrency_infos(["warehouse", "partitions"]).items():
                lines.append(f"pool {pool}: slots {info.slot_count}, claimed {[(s.run_id[:8], s.step_key) for s in info.claimed_slots]}, "
                             f"pending {[(s.run_id[:8], s.step_key, s.assigned_timestamp is not None) for s in info.pending_steps]}")
            files = sensor("benchmark_files_sensor", TICKS)["sensorState"]
            lines.append(f"file sensor {files['status']} (stopped at {file_sensor_stopped}), its ticks: {files['ticks'][:5]}")
            return "\n".join(lines)

        def both_waiting() -> bool:
            sample()
            return seen["waiting_backfills"] >= {result["backfillId"] for result in launched}

        services.wait(both_waiting, TIMEOUT, "both backfills' runs waiting for a `partitions` slot", state=state)
        instance.event_log_storage.set_concurrency_slots("partitions", limits["partitions"])
        timings["gate_opened"] = time.monotonic() - began

        def finished():
            runs = sample()
            partition_runs = [run for run in runs if run.job_name == benchmark_partitions_job.name]
            covered = sorted(slug for run in partition_runs for slug in _partitions_of(run))
            warehouse_runs = [run for run in runs if run.job_name == "warehouse"]
            if "partitions_done" not in timings and covered == sorted(SMALL) and all(r.status in FINISHED for r in partition_runs):
                timings["partitions_done"] = time.monotonic() - began
            return covered == sorted(SMALL) and warehouse_runs and all(run.status in FINISHED for run in runs)

        services.wait(finished, TIMEOUT, "warehouse run after both backfills", state=state)
        timings["warehouse_done"] = time.monotonic() - began

        # What the instance recorded, read from PostgreSQL while it still runs.
        records = {record.dagster_run.run_id: record for record in instance.get_run_records()}
        runs = {run_id: record.dagster_run for run_id, record in records.items()}
        seen["runs"] = sorted(
            (run.job_name, ",".join(_partitions_of(run)), run.tags.get("dagster/sensor_name", ""), run.status.value) for run in runs.values()
        )
        intervals = step_intervals(instance, runs)
        run_texts = _run_texts(instance, runs)
        materialized = {key.to_user_string(): instance.get_latest_materialization_event(key) for key in warehouse_keys}
        partitions_built = {"/".join(key): instance.get_materialized_partitions(dg.AssetKey(key)) for key in (
            ["raw", "benchmark_prompts"], ["raw", "benchmark_results"], ["labeling", "embedded_labels"], ["labeling", "embedded_judgements"])}
        requested = [tick["runIds"] for tick in sensor("warehouse_after_partitions", TICKS_WITH_RUNS)["sensorState"]["ticks"] if tick["runIds"]]
        file_ticks_after_stop = [t for t in sensor("benchmark_files_sensor", TICKS)["sensorState"]["ticks"] if t["timestamp"] > file_sensor_stopped[-1]]
    finally:
        if instance is not None:
            instance.dispose()
        stop_began = time.monotonic()
        try:
            services.stop()
        finally:  # the log kept whether the test passed or not
            ui_log = services.log.read_text(errors="replace")
            (ARTIFACTS / "scaleout_ui.log").write_text(ui_log)
        timings["stop"] = time.monotonic() - stop_began
    assert services.process.returncode == 0, ui_log[-4000:]
    assert not (data / "postgres" / "cluster" / "postmaster.pid").exists()
    assert services.leftovers() == []

    # The file sensor stayed off: every partition run below is a backfill's.
    assert file_ticks_after_stop == [], f"the file sensor ticked after it was stopped: {file_ticks_after_stop}"
    # 2. Every run succeeded: the backfills' runs, each over its own benchmarks, and one warehouse run.
    assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs.values()), seen["runs"]
    assert len(source_runs) == 1 and {runs[run_id].job_name for run_id in source_runs} == {"all_assets"}
    runs = {run_id: run for run_id, run in runs.items() if run_id not in source_runs}
    # A backfill of assets with the single-run backfill policy: one run per backfill, over its range.
    partition_runs = [run for run in runs.values() if run.job_name == benchmark_partitions_job.name]
    backfill_of_partition = {slug: result["backfillId"] for result, backfill in zip(launched, BACKFILLS) for slug in backfill}
    assert {slug: run.tags.get("dagster/backfill") for run in partition_runs for slug in _partitions_of(run)} == backfill_of_partition, seen["runs"]
    assert sum(len(_partitions_of(run)) for run in partition_runs) == len(SMALL), seen["runs"]
    warehouse_runs = [run for run in runs.values() if run.job_name == "warehouse"]
    assert len(warehouse_runs) == 1 and len(runs) == len(partition_runs) + 1, seen["runs"]
    warehouse_run = warehouse_runs[0]
    assert all(built == set(SMALL) for built in partitions_built.values()), partitions_built

    # 6 (how the warehouse started). By the sensor, through the daemon, once every partition run had ended.
    assert warehouse_run.tags.get("dagster/sensor_name") == "warehouse_after_partitions", warehouse_run.tags
    assert warehouse_run.tags.get("workbank/trigger") == "partitions_changed"
    assert requested == [[warehouse_run.run_id]], f"the sensor's ticks requested {requested}"
    last_partition_end = max(records[run.run_id].end_time for run in partition_runs)
    seen["sensor_lag_seconds"] = round(records[warehouse_run.run_id].create_timestamp.timestamp() - last_partition_end, 1)
    assert seen["sensor_lag_seconds"] >= 0, "the warehouse run was created before the last partition run ended"
    not_by_it = sorted(key for key, event in materialized.items() if event is None or event.run_id != warehouse_run.run_id)
    assert not_by_it == [], f"assets of job warehouse its run did not materialize: {not_by_it}"

    # 3. Steps of the two backfills ran at the same time.
    backfill_ids = [result["backfillId"] for result in launched]
    spans = {
        backfill: [(s, e) for s, e, run_id, step in intervals if run_id in runs and runs[run_id].tags.get("dagster/backfill") == backfill and pool_of.get(step) == "partitions"]
        for backfill in backfill_ids
    }
    assert all(spans.values()), spans
    seen["backfill_overlap_seconds"] = round(_overlap_seconds(*spans.values()), 2)
    assert seen["backfill_overlap_seconds"] > 0, f"the two backfills' partition steps never overlapped: {spans}"
    seen["partitions_pool_peak_from_events"] = _peak([(s, e) for s, e, _, step in intervals if pool_of.get(step) == "partitions"])

    # 4. The warehouse pool never held more than one step.
    warehouse_spans = [(s, e) for s, e, _, step in intervals if pool_of.get(step) == "warehouse"]
    assert warehouse_spans and {step for *_, step in intervals} <= set(pool_of), sorted({step for *_, step in intervals} - set(pool_of))
    seen["warehouse_pool_peak_from_events"] = _peak(warehouse_spans)
    assert seen["warehouse_pool_peak_from_events"] == 1
    assert seen["pool_peak_sampled"]["warehouse"] <= 1, seen["pool_peak_sampled"]

    # 5. No lock error in any run's events, the step logs (compute logs) or the services' own log.
    hits = _lock_hits({**run_texts, **_file_texts(home / "storage"), "cli team ui": ui_log})
    assert hits == [], hits

    # 6. The same warehouse, outputs and per-benchmark files as the serial run.
    serial = small_base_run / "data"
    first, second = snap.warehouse_hashes(serial / "warehouse.duckdb"), snap.warehouse_hashes(data / "warehouse.duckdb")
    assert {name.split(".")[0] for name in first["canonical"]} >= {"raw", "labeling", "staging", "marts", "analysis"}
    assert snap.differences(first["canonical"], second["canonical"]) == []
    files_first, files_second = snap.file_hashes(serial / "outputs", serial), snap.file_hashes(data / "outputs", data)
    assert "headline.json" in files_first["canonical"]
    assert snap.differences(files_first["canonical"], files_second["canonical"]) == []
    parts_first, parts_second = snap.file_hashes(serial / "partitions"), snap.file_hashes(data / "partitions")
    assert len([name for name in parts_first["canonical"] if not name.startswith("_")]) >= len(SMALL) * len(PARTITION_TABLES)
    assert snap.differences(parts_first["canonical"], parts_second["canonical"]) == []
    snap.report_exact_differences("scaleout vs serial, tables", first["exact"], second["exact"], ARTIFACTS / "scaleout_exact_tables.json")
    snap.report_exact_differences("scaleout vs serial, files", files_first["exact"], files_second["exact"], ARTIFACTS / "scaleout_exact_files.json")

    seen["timings_seconds"] = {name: round(value, 1) for name, value in timings.items()}
    (ARTIFACTS / "scaleout.json").write_text(json.dumps(seen, indent=2, default=str) + "\n")
    print(f"scaleout: {json.dumps(seen, default=str)}")


def test_negative_control_two_warehouse_writers_on_one_file_meet_the_lock_error(tmp_path, small_base_run, session_cache):
    """The same load (two writers of the warehouse at once) with what keeps them apart taken away:
    pool `warehouse` at 2 and the lock retry off. One run fails with DuckDB's lock error, and the
    scan of the first test sees it. Once one run has ended the other is stopped: one error is all
    the control needs."""
    from workbank_dagster.transform.project import ensure_manifest

    ensure_manifest()
    sources, _ = copy_small_run(small_base_run, tmp_path, session_cache)
    home = tmp_path / "dagster_home"
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        dagster_instance.configure_pools(instance, 2)
        instance.event_log_storage.set_concurrency_slots("warehouse", 2)
    finally:
        instance.dispose()
    env = {**pipeline_env(tmp_path, sources, session_cache), "WORKBANK_TEST_LOCK_WAIT_SECONDS": "0"}
    logs = {name: tmp_path / f"{name}.log" for name in ("first", "second")}
    processes = {}
    for name, log in logs.items():
        with open(log, "w") as out:
            processes[name] = subprocess.Popen(
                [sys.executable, str(HELPER), "warehouse"], cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
    began = time.monotonic()
    try:
        while all(process.poll() is None for process in processes.values()) and time.monotonic() - began < 240:
            time.sleep(0.2)
        ended = {name: process.returncode for name, process in processes.items() if process.poll() is not None}
    finally:
        for process in processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
    texts = {name: log.read_text(errors="replace") for name, log in logs.items()}
    for name, text in texts.items():
        (ARTIFACTS / f"scaleout_control_{name}.log").write_text(text)
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        control_runs = [run.run_id for run in instance.get_runs(dg.RunsFilter(tags={"workbank/trigger": "test warehouse"}))]
        run_texts = _run_texts(instance, control_runs)
    finally:
        instance.dispose()
    assert ended, "neither run ended within 240 s"
    assert len(control_runs) == 2, control_runs
    assert any(code != 0 for code in ended.values()), f"the first run to end succeeded: no writer met the other's lock ({ended})"
    hits = _lock_hits({**run_texts, **{f"process {n}": t for n, t in texts.items()}})
    assert hits, "a run failed, but not on a lock:\n" + "\n".join(t[-3000:] for t in texts.values())
    print(f"negative control: ended {ended} after {time.monotonic() - began:.0f} s; {len(hits)} lock error(s), e.g. {hits[0][:300]}")
