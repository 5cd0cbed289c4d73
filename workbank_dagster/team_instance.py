"""A Dagster instance for a team: the webserver and the daemon on PostgreSQL (`make ui-team`).

`make ui` keeps its instance in SQLite files under data/dagster_home: enough for one person, but a
run's events, schedules and pool slots then live on one disk and in one process's reach. Here the
instance's storage is PostgreSQL (dagster-postgres), with the QueuedRunCoordinator and the pools of
the local instance (`warehouse`: one slot, DuckDB has one writer).

PostgreSQL is a local cluster that the project starts and stops itself:

- `initdb` into `<data_dir>/postgres/cluster`, listening on 127.0.0.1 only (and a socket in
  `<data_dir>/postgres/run`), password authentication for every connection;
- run as an unprivileged operating-system user when this process is root (CI runs as root, and
  PostgreSQL refuses to run as root): `postgres` if that user exists, else `nobody`;
- the binaries are Debian's (package `postgresql`); when they are missing and this process is root,
  setup installs the package with apt-get, else it says which package to install;
- stopping it stops the postmaster named in its pid file and waits until that process and every
  process of the cluster have gone (`stop` checks, and says which remain if any do).

The generated password is kept in `<data_dir>/postgres/password` (mode 600) and written into the team
instance's dagster.yaml (`<data_dir>/dagster_home_team`, mode 600): the data folder is the user's own.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .dagster_instance import DAGSTER_YAML, configure_pools
from .settings import REPO_ROOT, InstanceSettings, settings_at_load

POSTGRES_PACKAGE = "postgresql"
DEFAULT_PORT = 5433  # not 5432: a system PostgreSQL may hold that one
ROLE = "workbank"
DATABASE = "dagster"

# The local instance's dagster.yaml (pools, run limits, run monitoring) plus Postgres storage and the
# run queue.
TEAM_DAGSTER_YAML = DAGSTER_YAML + """\
# The team instance (workbank_dagster.team_instance, `make ui-team`; docs/scaling.md).
storage:
  postgres:
    postgres_db:
      hostname: 127.0.0.1
      port: {port}
      username: {role}
      password: "{password}"
      db_name: {database}
      # SQLAlchemy 2.1 takes plain postgresql:// to mean psycopg 3; dagster-postgres brings psycopg2.
      scheme: postgresql+psycopg2
# Runs wait in a queue; the daemon starts them (up to concurrency.runs.max_concurrent_runs), and each
# step takes its pool's slot when it starts, as under `make run`. The queue does not hold runs back
# by its own estimate of their pools: it counts a slot for every first step of a run (a partition
# run has two, its prompts and its results) though a run's steps go one at a time, so with two
# `partitions` slots a second partition run waited until the first had started and 5 s more.
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    block_op_concurrency_limited_runs:
      enabled: false
"""


class TeamInstanceError(RuntimeError):
    pass


def postgres_bin(install: bool = True) -> Path:
    """The folder of Debian's PostgreSQL server binaries (initdb, pg_ctl, postgres), installing the
    package first when it is missing and this process may (root, apt-get present)."""
    for _ in range(2):
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
        if found:
            return found[-1].parent
        on_path = shutil.which("initdb")
        if on_path:
            return Path(on_path).resolve().parent
        if not install or os.geteuid() != 0 or shutil.which("apt-get") is None:
            break
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", POSTGRES_PACKAGE], check=True, env=env)
        install = False
    raise TeamInstanceError(f"PostgreSQL's server programs (initdb, pg_ctl) were not found: install Debian's package {POSTGRES_PACKAGE!r}")


def service_user() -> pwd.struct_passwd | None:
    """The unprivileged user the cluster runs as when this process is root; None: this process's user."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise TeamInstanceError("running as root, and neither the user 'postgres' nor 'nobody' exists to run PostgreSQL as")


@dataclass(frozen=True)
class PostgresCluster:
    folder: Path  # <data_dir>/postgres
    port: int = DEFAULT_PORT

    @property
    def data(self) -> Path:
        return self.folder / "cluster"

    @property
    def socket_dir(self) -> Path:
        return self.folder / "run"

    @property
    def log(self) -> Path:
        return self.folder / "postgres.log"

    @property
    def password_file(self) -> Path:
        return self.folder / "password"

    def _run(self, args: list[str], user: pwd.struct_passwd | None, **kwargs) -> subprocess.CompletedProcess:
        as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
        return subprocess.run(args, cwd="/", env=env, capture_output=True, text=True, **as_user, **kwargs)

    def password(self) -> str:
        if not self.password_file.is_file():
            self.folder.mkdir(parents=True, exist_ok=True)
            self.password_file.touch(mode=0o600)
            self.password_file.write_text(secrets.token_urlsafe(24))
        return self.password_file.read_text().strip()

    def initialized(self) -> bool:
        return (self.data / "PG_VERSION").is_file()

    def init(self) -> None:
        """initdb, once: the cluster's files owned by the service user, the role `workbank` with the
        generated password, password authentication (scram-sha-256) for local and TCP connections."""
        if self.initialized():
            return
        binaries, user = postgres_bin(), service_user()
        password = self.password()
        self.data.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        if user:
            _check_reachable(self.folder, user)
            for path in (self.data, self.socket_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        os.chmod(self.data, 0o700)
        pwfile = self.socket_dir / "initdb.pw"  # readable by initdb only, removed at once
        pwfile.write_text(password)
        if user:
            os.chown(pwfile, user.pw_uid, user.pw_gid)
        os.chmod(pwfile, 0o600)
        try:
            done = self._run(
                [str(binaries / "initdb"), "-D", str(self.data), "-U", ROLE, f"--pwfile={pwfile}", "--auth=scram-sha-256", "-E", "UTF8", "--no-instructions"],
                user,
            )
        finally:
            pwfile.unlink(missing_ok=True)
        if done.returncode != 0:
            raise TeamInstanceError(f"initdb failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")

    def pid(self) -> int | None:
        """The postmaster's process id while it runs (from postmaster.pid), else None."""
        try:
            pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if _alive(pid) else None

    def start(self) -> int:
        """Start the cluster (initdb first if new) on 127.0.0.1:port, wait until it takes connections,
        create the database `dagster` if missing; the postmaster's pid."""
        self.init()
        if self.pid() is None:
            binaries, user = postgres_bin(), service_user()
            if user:
                self.log.touch()
                os.chown(self.log, user.pw_uid, user.pw_gid)
            options = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.socket_dir}"
            done = self._run([str(binaries / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start"], user)
            if done.returncode != 0:
                tail = self.log.read_text(errors="replace")[-2000:] if self.log.is_file() else ""
                raise TeamInstanceError(f"pg_ctl start failed ({done.returncode}): {done.stderr.strip()}\n{tail}")
        self._ensure_database()
        pid = self.pid()
        assert pid is not None
        return pid

    def _ensure_database(self) -> None:
        import psycopg2

        con = psycopg2.connect(host="127.0.0.1", port=self.port, user=ROLE, password=self.password(), dbname="postgres", connect_timeout=10)
        try:
            con.autocommit = True
            with con.cursor() as cur:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
                if cur.fetchone() is None:
                    cur.execute(f"CREATE DATABASE {DATABASE}")
        finally:
            con.close()

    def processes(self) -> list[int]:
        """Every live process of this cluster: those whose command line names its data folder, and
        the postmaster's children (the server's own processes are named `postgres: …`)."""
        postmaster = self.pid()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                ppid = int(_stat_fields(entry)[1])
            except (OSError, ValueError, IndexError):
                continue
            if str(self.data) in cmdline or (postmaster is not None and ppid == postmaster):
                found.append(int(entry.name))
        return sorted(found)

    def stop(self, timeout: float = 60.0) -> None:
        """Stop the cluster (fast shutdown: sessions end, nothing half-written stays) and wait until
        no process of it remains; a TeamInstanceError names those that do."""
        if self.pid() is not None:
            binaries, user = postgres_bin(install=False), service_user()
            self._run([str(binaries / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "-t", str(int(timeout)), "stop"], user)
        deadline = time.monotonic() + timeout
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.2)
        if left:
            raise TeamInstanceError(f"PostgreSQL processes still running after stop: {left}")


def _stat_fields(proc: Path) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name: state, ppid, …"""
    return (proc / "stat").read_text().rsplit(")", 1)[1].split()


def _alive(pid: int) -> bool:
    """A process with this id exists and is not a zombie (one its parent has not reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return _stat_fields(Path(f"/proc/{pid}"))[0] != "Z"
    except OSError:
        return False


def _check_reachable(folder: Path, user: pwd.struct_passwd) -> None:
    """The service user must be able to reach the cluster's folder: every parent searchable by others."""
    for parent in [folder, *folder.parents]:
        if parent.exists() and not parent.stat().st_mode & 0o001 and parent.stat().st_uid != user.pw_uid:
            raise TeamInstanceError(
                f"PostgreSQL runs as the user {user.pw_name!r}, who cannot reach {folder}: {parent} is not searchable by others "
                "(chmod o+x it, or set WORKBANK_DATA_DIR to a folder that is)"
            )


def cluster(port: int = DEFAULT_PORT) -> PostgresCluster:
    return PostgresCluster(settings_at_load().resolve().data_dir / "postgres", port)


def team_home(postgres: PostgresCluster) -> Path:
    """The team instance's Dagster home (beside the cluster, in the data folder), with its dagster.yaml."""
    home = postgres.folder.parent / "dagster_home_team"
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    text = TEAM_DAGSTER_YAML.format(port=postgres.port, role=ROLE, password=postgres.password(), database=DATABASE)
    if not config.is_file() or config.read_text() != text:
        config.touch(mode=0o600)
        config.write_text(text)
    return home


def ui(port: int, postgres_port: int = DEFAULT_PORT) -> int:
    """Start the cluster, then the webserver and the daemon (`dagster dev`) on 127.0.0.1:port over it;
    on exit (Ctrl-C, SIGTERM) stop both and the cluster, leaving no process behind."""
    postgres = cluster(postgres_port)
    pid = postgres.start()
    home = team_home(postgres)
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(home))
    try:
        configure_pools(instance, InstanceSettings.from_env().partition_workers)
    finally:
        instance.dispose()
    print(f"PostgreSQL {pid} on 127.0.0.1:{postgres.port}; Dagster home {home}", flush=True)
    dagster = Path(sys.executable).with_name("dagster")
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    command = [str(dagster), "dev", "-w", str(REPO_ROOT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)]
    server: list[subprocess.Popen] = []
    stopping: list[int] = []

    def stop(signum, frame):  # noqa: ARG001 (signal handler signature)
        # `dagster dev` alone: on SIGINT it tells the webserver and the daemon to shut down, waits
        # for them, then ends its code servers. Signalling them all at once leaves it waiting.
        stopping.append(signum)
        if server and server[0].poll() is None:
            os.kill(server[0].pid, signal.SIGINT)

    # Installed before `dagster dev` starts: a handler (unlike an ignored signal, as a shell gives a
    # background job) is reset to the default in the child, so it takes SIGINT as Ctrl-C.
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.append(subprocess.Popen(command, cwd=REPO_ROOT, env=env, start_new_session=True))
        if stopping:  # a signal came before there was a process to pass it to
            os.kill(server[0].pid, signal.SIGINT)
        code = server[0].wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if server:
            _end_group(server[0].pid)
        postgres.stop()
    return 0 if stopping else code


def _end_group(pgid: int, timeout: float = 150.0) -> None:
    """Wait for the process group of `dagster dev` (webserver, daemon, code servers) to end; SIGKILL
    what is left after `timeout` (dagster dev gives each of its two services 60 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
