"""The Dagster instance every CLI command opens: its folder (DAGSTER_HOME, else
`<data_dir>/dagster_home`, made with DAGSTER_YAML when new), whether its PostgreSQL answers (one
clear error instead of dagster-postgres' retries), and its pools' slots."""

from __future__ import annotations

import os
from pathlib import Path

from .settings import InstanceSettings, settings_at_load

DAGSTER_YAML = """\
# Written by workbank_dagster.cli; see README.md.
telemetry:
  enabled: false
# DuckDB allows one writer per file: every asset that touches the warehouse is in pool `warehouse`;
# the per-benchmark steps write their own files and are in pool `partitions`.
concurrency:
  pools:
    default_limit: 1
  runs:
    max_concurrent_runs: 4
# Under `make ui` (the daemon runs): a run that ended without releasing its pool slot (a step
# process killed before it could report) gives the slot back after a minute instead of never.
run_monitoring:
  enabled: true
  free_slots_after_run_end_seconds: 60
"""


def dagster_home() -> Path:
    """The Dagster instance's folder: DAGSTER_HOME, else `dagster_home` in the data folder; made,
    with DAGSTER_YAML, if it is new. The environment is read, never written: the CLI opens the
    instance from this folder (`open_instance`), not through DAGSTER_HOME."""
    home = Path(os.environ.get("DAGSTER_HOME") or (settings_at_load().resolve().data_dir / "dagster_home"))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    return home


class InstanceUnreachable(RuntimeError):
    """The instance's PostgreSQL does not answer: one message naming its host and port."""


def postgres_endpoint(home: Path) -> tuple[str, int] | None:
    """The host and port of the PostgreSQL that `home/dagster.yaml` keeps its storage in (`storage:
    postgres:`, as the team instance writes it, or a `postgres_url`); None for any other storage."""
    import urllib.parse

    import yaml

    config = yaml.safe_load((home / "dagster.yaml").read_text()) if (home / "dagster.yaml").is_file() else None
    postgres = ((config or {}).get("storage") or {}).get("postgres")
    if not isinstance(postgres, dict):
        return None

    def yaml_value(entry):  # dagster's `{env: NAME}` form
        return os.environ.get(entry["env"]) if isinstance(entry, dict) and "env" in entry else entry

    if "postgres_url" in postgres:
        url = urllib.parse.urlsplit(str(yaml_value(postgres["postgres_url"])))
        return url.hostname or "localhost", url.port or 5432
    db = postgres.get("postgres_db") or {}
    return str(yaml_value(db.get("hostname")) or "localhost"), int(yaml_value(db.get("port")) or 5432)


def check_reachable(home: Path, timeout: float = 5.0) -> None:
    """Raise InstanceUnreachable when the instance's PostgreSQL takes no connection. dagster-postgres
    would retry for about 14 s and then say only "too many retries for DB connection"."""
    import socket

    endpoint = postgres_endpoint(home)
    if endpoint is None:
        return
    host, port = endpoint
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise InstanceUnreachable(
            f"the Dagster instance's PostgreSQL at {host}:{port} is unreachable ({exc.strerror or exc}); "
            f"its storage is configured in {home / 'dagster.yaml'}. Start it (`python -m workbank_dagster.cli team start` "
            "for the project's own cluster), or point DAGSTER_HOME at another instance."
        ) from None


def open_instance():
    """The Dagster instance of `dagster_home()`, as every CLI command opens it; a PostgreSQL storage
    that takes no connection is one clear error (`check_reachable`), not a stack of retries."""
    import dagster as dg

    home = dagster_home()
    check_reachable(home)
    instance = dg.DagsterInstance.from_config(str(home))
    configure_pools(instance, InstanceSettings.from_env().partition_workers)
    return instance


POOL_LIMITS = {"warehouse": 1}  # DuckDB takes one writer; `partitions` is the setting partition_workers


def configure_pools(instance, partition_workers: int) -> dict[str, int]:
    """Give the instance's pools their slots: `warehouse` one, `partitions` `partition_workers`.
    dagster.yaml sets only a default for every pool (`pools.default_limit`), so a limit of its own
    is kept in the instance's storage, where the UI (Deployment > Concurrency) shows it."""
    limits = {**POOL_LIMITS, "partitions": partition_workers}
    for pool, limit in limits.items():
        instance.event_log_storage.set_concurrency_slots(pool, limit)
    return limits
