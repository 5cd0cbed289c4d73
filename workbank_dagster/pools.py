"""Pool slots: give back the ones a dead run still holds, and say who a waiting step waits for.

Every asset that writes the warehouse is in pool `warehouse` (one slot: DuckDB has one writer).
A run that ends without releasing its slot, or whose process is killed outright (an out-of-memory
kill, `make ui` killed hard, a machine restart) while it holds one, leaves the slot claimed, and
every later warehouse step waits for it forever. Under `make ui` the daemon's run monitoring frees
the slots of runs that ended; it cannot see a run whose process died without ending it, and an
operator may not run the daemon at all. So each launch by the CLI (`cli run`, `cli label-llm`)
first frees what ended or dead runs hold (`free_slots_of_ended_runs`), and while it runs, a
`PoolWatch` says at INFO which of its steps waits on a pool and which run holds the slot, and
frees a slot whose holder died during the wait.

A run's process is its RUN_START event's: the process that orchestrates the run. It is judged
dead only on a local instance (SQLite storage under DAGSTER_HOME, so every run ran on this
machine) when no process has that id, or the process with that id started after the run did.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

log = logging.getLogger("workbank_dagster.pools")

ENDED = ["SUCCESS", "FAILURE", "CANCELED"]
# How often a launch looks at the pools while it runs, and how often it repeats the same message.
WATCH_SECONDS = 5.0
REPEAT_SECONDS = 60.0


def process_start_time(pid: int) -> float | None:
    """When process `pid` started (seconds since the epoch), from /proc; None where /proc is not."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def process_alive(pid: int, since: float) -> bool:
    """Whether the process `pid`, started no later than `since`, still runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, as another user's process
    started = process_start_time(pid)
    return started is None or started <= since + 2.0  # later: the id was reused by another process


def is_local(instance) -> bool:
    """Runs of a SQLite instance all ran on this machine (a Postgres one's may run anywhere)."""
    # Private: dagster exports no run-storage class, nor a public way to ask an instance which
    # storage it has (docs/layout.md, "Dagster internals").
    from dagster._core.storage.runs import SqliteRunStorage

    return isinstance(instance.run_storage, SqliteRunStorage)


def run_process(instance, run_id: str) -> tuple[int, float] | None:
    """(pid, start time) of the process that orchestrates the run, from its RUN_START event."""
    import dagster as dg

    records = instance.get_records_for_run(run_id, of_type=dg.DagsterEventType.RUN_START, limit=1).records
    if not records or records[0].event_log_entry.dagster_event is None or records[0].event_log_entry.dagster_event.pid is None:
        return None
    entry = records[0].event_log_entry
    return entry.dagster_event.pid, entry.timestamp


def dead_runs(instance, run_ids) -> list[tuple]:
    """(run, pid) of the runs among `run_ids` still marked in progress whose process is gone
    (local instance only)."""
    if not is_local(instance):
        return []
    dead = []
    for run_id in run_ids:
        run = instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            continue
        process = run_process(instance, run_id)
        if process is not None and not process_alive(*process):
            dead.append((run, process[0]))
    return dead


def free_slots_of_ended_runs(instance) -> int:
    """Give back the pool slots held by runs that have ended, or whose process is gone (a run killed
    outright is first marked failed, saying why); the number of runs freed. A live run keeps its slots."""
    import dagster as dg

    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return 0
    run_ids = storage.get_concurrency_run_ids()
    if not run_ids:
        return 0
    for run, pid in dead_runs(instance, run_ids):
        instance.report_run_failed(run, f"its process (pid {pid}) is gone: it was killed without ending the run, holding a pool slot")
        log.info("run %s (%s) was killed holding a pool slot (its process %s is gone): marked failed", run.run_id, run.job_name, pid)
    statuses = [dg.DagsterRunStatus(status) for status in ENDED]
    ended = instance.get_run_records(filters=dg.RunsFilter(run_ids=list(run_ids), statuses=statuses))
    for record in ended:
        storage.free_concurrency_slots_for_run(record.dagster_run.run_id)
        log.info("freed the pool slots still held by ended run %s (%s)", record.dagster_run.run_id, record.dagster_run.status.value)
    return len(ended)


def waiting_messages(instance, run_ids: set[str]) -> list[str]:
    """For each step of `run_ids` waiting on a pool: which pool, and which runs hold its slots."""
    storage = instance.event_log_storage
    messages = []
    for pool in sorted(storage.get_concurrency_keys()):
        info = storage.get_concurrency_info(pool)
        waiting = [step for step in info.pending_steps if step.run_id in run_ids and step.assigned_timestamp is None]
        if not waiting:
            continue
        holders = []
        for slot in info.claimed_slots:
            run = instance.get_run_by_id(slot.run_id)
            state = f"job {run.job_name}, {run.status.value}" if run is not None else "no such run"
            holders.append(f"run {slot.run_id} ({state}, step {slot.step_key})")
        held = "; ".join(holders) or "no run (the slots are being handed over)"
        for step in waiting:
            messages.append(f"step {step.step_key} of run {step.run_id} waits for pool '{pool}' ({info.slot_count} slot(s)), held by {held}")
    return messages


class PoolWatch:
    """While a launch runs (`with PoolWatch(launch_id):`), say at INFO which of its runs' steps
    wait on a pool and who holds the slot, and free the slots of runs that end or die meanwhile.
    Its runs are the runs carrying the launch's tag `workbank/launch`."""

    def __init__(self, launch_id: str, instance=None, interval: float = WATCH_SECONDS, home: Path | None = None) -> None:
        self._instance = instance  # default: an instance of its own (`home`, else DAGSTER_HOME), opened in its thread
        self._home = home
        self.launch_id = launch_id
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="pool-watch", daemon=True)
        self._said: dict[str, float] = {}

    def __enter__(self) -> PoolWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval + 5)

    @property
    def instance(self):
        import dagster as dg

        if self._instance is None:
            self._instance = dg.DagsterInstance.from_config(str(self._home)) if self._home else dg.DagsterInstance.get()
        return self._instance

    def _runs(self) -> set[str]:
        import dagster as dg

        return set(self.instance.get_run_ids(filters=dg.RunsFilter(tags={"workbank/launch": self.launch_id})))

    def check(self) -> list[str]:
        """One look: the messages said now (a repeated one at most every REPEAT_SECONDS)."""
        import time

        runs = self._runs()
        if not runs:
            return []
        messages = waiting_messages(self.instance, runs)
        if messages:
            free_slots_of_ended_runs(self.instance)
        now, said = time.monotonic(), []
        for message in messages:
            if now - self._said.get(message, -REPEAT_SECONDS) >= REPEAT_SECONDS:
                self._said[message] = now
                log.info(message)
                said.append(message)
        return said

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception as error:  # never let the watch end a launch
                log.debug("pool watch: %s", error)
