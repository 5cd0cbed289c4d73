"""The team instance (`make ui-team`, workbank_dagster/team_instance.py): the webserver and the daemon
on a PostgreSQL cluster the project starts itself, with the QueuedRunCoordinator and the pools; and
when it is stopped, no process of it is left.

Real processes throughout: `cli team ui` as `make ui-team` runs it, Debian's PostgreSQL started by
initdb/pg_ctl as an unprivileged user (the suite runs as root in CI), dagster dev's webserver and
daemon, a run materialized into the Postgres storage. The benchmark and audit folders are empty, so
no sensor requests a pipeline run while the test looks.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import pytest
from team_service import free_port, processes_naming, webserver_up

from workbank_dagster.settings import REPO_ROOT


@pytest.fixture()
def team_folder(source_dir):
    """A data folder PostgreSQL's user can reach (pytest's own tmp folders are private to root), and
    a source folder with the shared sources but empty benchmarks."""
    folder = Path(tempfile.mkdtemp(prefix="workbank-team-", dir="/tmp"))
    folder.chmod(0o755)
    sources = folder / "sources"
    (sources / "benchmarks").mkdir(parents=True)
    for entry in source_dir.iterdir():
        if entry.is_dir() and entry.name != "benchmarks":
            (sources / entry.name).symlink_to(entry)
    (folder / "audits").mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _wait(condition, timeout: float, what: str, process: subprocess.Popen, log: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"`cli team ui` exited ({process.returncode}) before {what}:\n{log.read_text()[-4000:]}")
        value = condition()
        if value:
            return value
        time.sleep(1)
    pytest.fail(f"no {what} after {timeout:.0f} s:\n{log.read_text()[-4000:]}")


def test_team_instance_runs_on_postgres_and_stops_without_a_trace(team_folder):
    import psycopg2

    data, port, pg_port = team_folder / "data", free_port(), free_port()
    env = {
        **os.environ,
        "WORKBANK_DATA_DIR": str(data),
        "WORKBANK_SOURCE_DIR": str(team_folder / "sources"),
        "WORKBANK_AUDITS_DIR": str(team_folder / "audits"),
    }
    env.pop("DAGSTER_HOME", None)
    log = team_folder / "ui.log"
    with open(log, "w") as out:
        ui = subprocess.Popen(
            [sys.executable, "-m", "workbank_dagster.cli", "team", "ui", "--port", str(port), "--postgres-port", str(pg_port)],
            cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        _wait(lambda: webserver_up(port), 240, "webserver answering /server_info", ui, log)
        home = data / "dagster_home_team"
        instance = dg.DagsterInstance.from_config(str(home))
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert instance.event_log_storage.get_pool_config().default_pool_limit == 1
        # The daemon runs against the same Postgres: its heartbeats, the run queue's among them, are there.
        beats = _wait(lambda: set(instance.get_daemon_heartbeats()) >= {"QUEUED_RUN_COORDINATOR", "SENSOR"} and instance.get_daemon_heartbeats(), 120, "daemon heartbeats", ui, log)
        assert "SCHEDULER" in beats

        # A run in pool `warehouse` is recorded in Postgres, with the pool's one slot.
        @dg.asset(pool="warehouse", key=["test", "team_probe"])
        def team_probe() -> int:
            return 1

        assert dg.materialize([team_probe], instance=instance).success
        assert [limit.limit for limit in instance.event_log_storage.get_pool_limits() if limit.name == "warehouse"] == [1]
        password = (data / "postgres" / "password").read_text().strip()
        con = psycopg2.connect(host="127.0.0.1", port=pg_port, user="workbank", password=password, dbname="dagster")
        try:
            with con.cursor() as cur:
                cur.execute("select count(*) from runs")
                assert cur.fetchone()[0] == 1
                cur.execute("show listen_addresses")
                assert cur.fetchone()[0] == "127.0.0.1"
        finally:
            con.close()
        postmaster = int((data / "postgres" / "cluster" / "postmaster.pid").read_text().split()[0])
        assert os.stat(f"/proc/{postmaster}").st_uid != 0  # PostgreSQL refuses root; it runs as its own user
        instance.dispose()
    finally:
        if ui.poll() is None:
            ui.send_signal(signal.SIGTERM)
        try:
            ui.wait(timeout=240)
        except subprocess.TimeoutExpired:
            ui.kill()
            pytest.fail(f"`cli team ui` did not stop within 240 s of SIGTERM:\n{log.read_text()[-4000:]}")
    assert ui.returncode == 0, log.read_text()[-4000:]
    assert not (data / "postgres" / "cluster" / "postmaster.pid").exists()
    assert processes_naming(str(team_folder), f"--port {port}", f"-p {port}", f"-p {pg_port}") == []


def test_an_unreachable_postgres_is_one_clear_error_naming_its_host_and_port(tmp_path):
    """A CLI command on a team instance whose PostgreSQL is down: exit 2 and one line naming
    127.0.0.1:<port> and the dagster.yaml, where dagster-postgres alone retried for ~14 s and said
    only "too many retries for DB connection", under a traceback."""
    from workbank_dagster.team_instance import DATABASE, ROLE, TEAM_DAGSTER_YAML

    port = free_port()  # bound and closed: nothing listens there
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(TEAM_DAGSTER_YAML.format(port=port, role=ROLE, password="unused", database=DATABASE))
    done = subprocess.run(
        [sys.executable, "-m", "workbank_dagster.cli", "free-slots"],
        env={**os.environ, "DAGSTER_HOME": str(home), "WORKBANK_DATA_DIR": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"PostgreSQL at 127.0.0.1:{port} is unreachable" in errors[0], done.stderr
    assert str(home / "dagster.yaml") in errors[0]
    assert "Traceback" not in done.stderr and "too many retries" not in done.stderr


def test_the_postgres_endpoint_is_read_from_each_form_dagster_takes(tmp_path, monkeypatch):
    from workbank_dagster.dagster_instance import DAGSTER_YAML, postgres_endpoint

    (tmp_path / "dagster.yaml").write_text(DAGSTER_YAML)
    assert postgres_endpoint(tmp_path) is None  # SQLite: nothing to reach
    (tmp_path / "dagster.yaml").write_text("storage:\n  postgres:\n    postgres_url: postgresql://u:p@db.internal:6543/dagster\n")
    assert postgres_endpoint(tmp_path) == ("db.internal", 6543)
    monkeypatch.setenv("PG_HOST", "pg.example")
    (tmp_path / "dagster.yaml").write_text(
        "storage:\n  postgres:\n    postgres_db:\n      hostname: {env: PG_HOST}\n      username: u\n      db_name: d\n"
    )
    assert postgres_endpoint(tmp_path) == ("pg.example", 5432)


def test_the_team_queue_leaves_pool_slots_to_the_steps():
    """The team instance's run queue starts runs up to max_concurrent_runs and never holds one back by
    its own count of pool slots (which counts both first steps of a partition run, so with two
    `partitions` slots it held the second backfill's run until the first had started and 5 s more):
    each step takes its slot when it starts. tests/scenarios/test_scaleout.py sees the two runs overlap."""
    import yaml
    from dagster._core.run_coordinator import QueuedRunCoordinator

    from workbank_dagster.team_instance import DATABASE, ROLE, TEAM_DAGSTER_YAML

    config = yaml.safe_load(TEAM_DAGSTER_YAML.format(port=5433, role=ROLE, password="unused", database=DATABASE))
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"
    queue = QueuedRunCoordinator(**config["run_coordinator"]["config"]).get_run_queue_config()
    assert queue.should_block_op_concurrency_limited_runs is False
    assert config["concurrency"]["pools"]["default_limit"] == 1 and config["concurrency"]["runs"]["max_concurrent_runs"] == 4
