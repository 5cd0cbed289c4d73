"""Read an unchanged source back from the warehouse instead of parsing its file again.

A warm run used to parse and validate every source file again (about 8 of its 60 seconds). Now
each load is recorded in `raw._source_loads` after its rows are written: the table, the partition
('' for a whole table), the file's SHA-256, a fingerprint of the parser code, the row count, the
parsed frame's dtypes and attrs, and the file's path (relative to the source folder) and size: the
record of what was read, which `raw/source_files` publishes. A later load of a file with the same SHA-256 by the same
parser code finds the record, checks that the table still holds exactly that many rows for it,
and reads those rows back: the same frame the parser produced, so the same metadata.

Anything else parses as before: a changed file, changed code of the loading steps or of any
project module they import (`fingerprint.code_sha256`), a warehouse rebuilt or emptied, a
missing record. The record is written after
the rows, in its own statement, so a crash between the two leaves a record that no longer
matches (its SHA-256 or parser is the old one) and the next load parses. The one thing the
check cannot see is a table rewritten by hand with the same row count.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable

import duckdb
import pandas as pd

from .. import warehouse
from ..fingerprint import code_sha256

MEMO_TABLE = "_source_loads"
# The steps that load sources: their modules and every project module they import are "the parser".
LOADERS = ("workbank_dagster.sources.assets", "workbank_dagster.sources.benchmark_assets", "workbank_dagster.sources.load_memo")


@functools.lru_cache(maxsize=1)
def parser_code_sha256() -> str:
    """SHA-256 over the code that turns a file into rows (fingerprint.code_sha256 of the loaders)."""
    return code_sha256(*LOADERS)


def _memo(schema: str) -> str:
    return f"{warehouse.quote(schema)}.{warehouse.quote(MEMO_TABLE)}"


MEMO_COLUMNS = ["table_name", "partition_key", "source_sha256", "parser_sha256", "row_count", "dtypes", "attrs", "source_file", "source_bytes"]


def _ensure(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    con.execute(f"CREATE SCHEMA IF NOT EXISTS {warehouse.quote(schema)}")
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {_memo(schema)} (table_name VARCHAR NOT NULL, partition_key VARCHAR NOT NULL, "
        "source_sha256 VARCHAR NOT NULL, parser_sha256 VARCHAR NOT NULL, row_count BIGINT NOT NULL, "
        "dtypes VARCHAR NOT NULL, attrs VARCHAR NOT NULL, source_file VARCHAR, source_bytes BIGINT, PRIMARY KEY (table_name, partition_key))"
    )
    # A memo written before the file and its size were recorded: add them (NULL until its next load).
    warehouse.add_columns(con, schema, MEMO_TABLE, MEMO_COLUMNS, {"source_file": "VARCHAR", "source_bytes": "BIGINT"})


def _rows_where(partition: str | None, partition_column: str) -> tuple[str, list]:
    return ("", []) if partition is None else (f" WHERE {warehouse.quote(partition_column)} = ?", [partition])


def reuse(
    con: duckdb.DuckDBPyConnection,
    schema: str,
    table: str,
    source_sha256: str,
    partition: str | None = None,
    partition_column: str = "benchmark",
) -> pd.DataFrame | None:
    """The rows of a load recorded with this file hash and parser, or None (parse the file)."""
    try:
        record = con.execute(
            f"SELECT row_count, dtypes, attrs FROM {_memo(schema)} WHERE table_name = ? AND partition_key = ? "
            "AND source_sha256 = ? AND parser_sha256 = ?",
            [table, partition or "", source_sha256, parser_code_sha256()],
        ).fetchone()
        if record is None:
            return None
        where, params = _rows_where(partition, partition_column)
        frame = con.execute(f"SELECT * FROM {warehouse.quote(schema)}.{warehouse.quote(table)}{where}", params).df()
    except duckdb.CatalogException:  # no memo table or no data table yet
        return None
    dtypes = json.loads(record[1])
    if len(frame) != record[0] or list(frame.columns) != list(dtypes):
        return None
    frame = frame.astype(dtypes)
    frame.attrs.update(json.loads(record[2]))
    return frame


def record(
    con: duckdb.DuckDBPyConnection,
    schema: str,
    table: str,
    source_sha256: str,
    frame: pd.DataFrame,
    partition: str | None = None,
    source_file: str | None = None,
    source_bytes: int | None = None,
) -> None:
    """Note that `frame` (already written) is what this file (`source_file`, `source_bytes` long)
    parsed to."""
    _ensure(con, schema)
    attrs = {k: v for k, v in frame.attrs.items() if isinstance(v, (int, float, str, bool))}
    con.execute(
        f"INSERT OR REPLACE INTO {_memo(schema)} ({', '.join(MEMO_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [table, partition or "", source_sha256, parser_code_sha256(), len(frame),
         json.dumps({str(c): str(t) for c, t in frame.dtypes.items()}), json.dumps(attrs, sort_keys=True), source_file, source_bytes],
    )



def reuse_or_parse(
    warehouse_db,
    schema: str,
    table: str,
    source_sha256: str,
    parse: Callable[[], pd.DataFrame],
    write: Callable[[duckdb.DuckDBPyConnection, pd.DataFrame], object],
    partition: str | None = None,
    source_file: str | None = None,
    source_bytes: int | None = None,
) -> tuple[pd.DataFrame, bool]:
    """The recorded load's rows if they still stand, else `parse()`, `write` it and record it.

    Returns the frame and whether it was parsed. `write` replaces the table (or the partition's
    rows); the record follows it, so a crash in between leaves nothing that matches."""
    with warehouse_db.connect() as con:
        frame = reuse(con, schema, table, source_sha256, partition=partition)
    if frame is not None:
        return frame, False
    frame = parse()
    with warehouse_db.connect() as con:
        write(con, frame)
        record(con, schema, table, source_sha256, frame, partition=partition, source_file=source_file, source_bytes=source_bytes)
    return frame, True
