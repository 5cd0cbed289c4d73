"""The DuckDB warehouse: short-lived connections and atomic, idempotent writes.

DuckDB allows one writer per file and, while a process holds it read-write, no other process may
open it at all. So every connection here is opened for one unit of work and closed at once (dbt runs
in its own process between assets), and opening retries for a bounded time when another process
holds the lock (a second concurrent run, the webserver's reader, a user's notebook).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import duckdb
import pandas as pd

LOCK_WAIT_SECONDS = 300.0
# DuckDB takes up to 80% of the machine's memory by default and spills to disk only past it: a
# bounded limit makes a large sort (the table exports' `order by all`) spill instead, so the
# pipeline's memory does not grow with the corpus (bench/warehouse_growth.py). dbt's connections
# take the same limit (dbt_project/profiles.yml). DuckDB's progress bar is off: it writes to stdout,
# into the run's logs, whenever a statement takes more than two seconds.
MEMORY_LIMIT = "3GB"


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "lock" in text and ("conflicting" in text or "could not set" in text or "lock on file" in text)


@contextlib.contextmanager
def connect(path: Path | str, *, read_only: bool = False, wait_seconds: float = LOCK_WAIT_SECONDS) -> Iterator[duckdb.DuckDBPyConnection]:
    path = Path(path)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config={"memory_limit": MEMORY_LIMIT})
            break
        except duckdb.IOException as exc:
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay + random.uniform(0, delay))
            delay = min(delay * 2, 2.0)
    try:
        con.execute("set enable_progress_bar = false")
        yield con
    finally:
        con.close()


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _duckdb_type(series: pd.Series) -> str:
    dtype = series.dtype
    kind = getattr(dtype, "kind", "O")
    name = str(dtype).lower()
    if name in ("boolean", "bool"):
        return "BOOLEAN"
    if name.startswith("int") or name.startswith("uint") or kind in "iu":
        return "BIGINT"
    if name.startswith("float") or kind == "f":
        return "DOUBLE"
    if kind == "M" or "datetime" in name:
        return "TIMESTAMP"
    return "VARCHAR"


def _select_typed(frame: pd.DataFrame, view: str) -> str:
    columns = ", ".join(f"CAST({quote(c)} AS {_duckdb_type(frame[c])}) AS {quote(c)}" for c in frame.columns)
    return f"SELECT {columns} FROM {quote(view)}"


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Everything in the block commits together, or, on an error (in the block or at the commit), none
    of it does."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def _incoming(con: duckdb.DuckDBPyConnection, schema: str, table: str, frame: pd.DataFrame) -> Iterator[str]:
    """The frame registered as a view, inside one transaction that rolls back on any error."""
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote(schema)}")
    view = f"_incoming_{table}"
    con.register(view, frame)
    try:
        with transaction(con):
            yield view
    finally:
        con.unregister(view)


def replace_table(con: duckdb.DuckDBPyConnection, schema: str, table: str, frame: pd.DataFrame) -> int:
    """Replace a whole table in one transaction; readers never see it half-written."""
    with _incoming(con, schema, table, frame) as view:
        con.execute(f"CREATE OR REPLACE TABLE {quote(schema)}.{quote(table)} AS {_select_typed(frame, view)}")
    return len(frame)


def _matching(where: dict[str, Sequence[str] | str]) -> tuple[list[str], list[object]]:
    """SQL conditions `column IN (?, ...)` and their parameters, one per column of `where`."""
    conditions: list[str] = []
    params: list[object] = []
    for column, values in where.items():
        values = [values] if isinstance(values, str) else list(values)
        conditions.append(f"{quote(column)} IN ({', '.join('?' for _ in values)})")
        params.extend(values)
    return conditions, params


def delete_rows_except(
    con: duckdb.DuckDBPyConnection, schema: str, table: str, column: str, keep: Sequence[str], where: dict[str, Sequence[str] | str] | None = None
) -> int:
    """Delete the rows whose `column` is none of `keep` (every row with a `column` when `keep` is
    empty), among those matching `where`; return how many went. A row whose `column` is NULL stays,
    as `NOT IN` leaves it; a table that does not exist loses nothing.

    How the rows of a removed partition leave: `keep` is the partitions that still exist."""
    if not table_exists(con, schema, table):
        return 0
    conditions, params = _matching(where or {})
    if keep:
        conditions.append(f"{quote(column)} NOT IN ({', '.join('?' for _ in keep)})")
        params.extend(keep)
    else:
        conditions.append(f"{quote(column)} IS NOT NULL")
    return int(con.execute(f"DELETE FROM {quote(schema)}.{quote(table)} WHERE {' AND '.join(conditions)}", params).fetchone()[0])


def replace_rows(
    con: duckdb.DuckDBPyConnection,
    schema: str,
    table: str,
    frame: pd.DataFrame,
    where: dict[str, Sequence[str] | str],
) -> int:
    """Delete the rows matching `where` (column → value or values) and insert `frame`, atomically.

    This is how a partition is written: the rows of one benchmark (and, for labels, one labeler)
    are replaced and every other partition is left as it was. The table is created from the frame's
    columns on first use; a frame whose columns differ from the table's is an error, not a silent
    reshape.
    """
    target = f"{quote(schema)}.{quote(table)}"
    conditions, params = _matching(where)
    with _incoming(con, schema, table, frame) as view:
        con.execute(f"CREATE TABLE IF NOT EXISTS {target} AS {_select_typed(frame, view)} LIMIT 0")
        existing = [row[0] for row in con.execute(f"DESCRIBE {target}").fetchall()]
        if existing != list(frame.columns):
            raise ValueError(f"{schema}.{table}: columns {list(frame.columns)} do not match the table's {existing}")
        if conditions:
            con.execute(f"DELETE FROM {target} WHERE {' AND '.join(conditions)}", params)
        con.execute(f"INSERT INTO {target} {_select_typed(frame, view)}")
    return len(frame)


def append_rows(con: duckdb.DuckDBPyConnection, schema: str, table: str, frame: pd.DataFrame) -> int:
    """Insert `frame` into an append-only table (created from the frame on first use), atomically;
    a frame whose columns differ from the table's is an error (`replace_rows` with no rows to replace)."""
    return replace_rows(con, schema, table, frame, where={})


def table_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?", [schema, table]
    ).fetchone()
    return bool(row and row[0])


def query_if_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str, sql: str) -> pd.DataFrame | None:
    """`sql`, where `{table}` stands for `schema.table`, as a frame; None where that table does not
    exist (an optional source not loaded, a warehouse rebuilt without it)."""
    if not table_exists(con, schema, table):
        return None
    return con.execute(sql.format(table=f"{quote(schema)}.{quote(table)}")).df()


def table_hash(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> str:
    """Content hash of a table, independent of physical row order; repeated rows count each time."""
    target = f"{quote(schema)}.{quote(table)}"
    row = con.execute(f"SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM {target} AS t").fetchone()
    return f"{row[0]}:{row[1]}"
