"""Exports: every mart and analysis table as Parquet and CSV, and a data dictionary from the dbt docs.

Files are written in a stable row order (`order by all`) to a temporary name and moved into place,
so a reader never sees half a file and a table rewritten with the same rows has the same bytes. A table
whose rows are those of the last export (exports.json) is not written again; a table of more than
ROW_LIMIT rows with a `benchmark` column is written per benchmark, and only the benchmarks whose rows changed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import duckdb
import pandas as pd

from ..analysis.columns import column_description
from ..atomic import atomic_path, write_text
from ..warehouse import quote

EXPORTED_SCHEMAS = ("marts", "analysis")


# User audits (analysis.user_audit and its catalog) run after the main job, in partitions of their own: they stay in
# the warehouse and are not exported, so the exports of a run do not depend on what ran before it.
NOT_EXPORTED = {("analysis", "user_audit"), ("analysis", "user_audit_catalog")}


def exported_tables(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    rows = con.execute(
        "select table_schema, table_name from information_schema.tables where table_schema in (select unnest(?)) order by 1, 2",
        [list(EXPORTED_SCHEMAS)],
    ).fetchall()
    return [(schema, name) for schema, name in rows if (schema, name) not in NOT_EXPORTED]


def _sql_path(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


FORMATS = (("parquet", "format parquet, compression zstd"), ("csv", "format csv, header true"))
# A table of more than ROW_LIMIT rows with a `benchmark` column is exported as one folder per table and one
# subfolder per benchmark (Hive layout, which DuckDB, pyarrow and Spark read as one dataset), and a refresh
# writes only the benchmarks whose rows changed. Why a quarter of a million: a spreadsheet opens at most
# 1,048,576 rows, and a table written whole is written whole on every refresh that changes a row of it. At a
# million prompts the two tables of a row per prompt (1.01 M rows each, under a spreadsheet's limit) took
# 1.1 and 1.6 s to write as Parquet and CSV after one benchmark was added; a table of this many rows takes
# about a quarter of that. The real run's tables are all far shorter, and are each one file.
ROW_LIMIT = 250_000
PARTITION_COLUMN = "benchmark"
PARTITION_FILE = "data"


def _columns(con: duckdb.DuckDBPyConnection, schema: str, name: str) -> tuple[list[str], str]:
    """The table's column names, and a digest of its names and types (a renamed or retyped column rewrites its files)."""
    rows = con.execute(
        "select column_name, data_type from information_schema.columns where table_schema = ? and table_name = ? order by ordinal_position",
        [schema, name],
    ).fetchall()
    return [column for column, _ in rows], hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def _fingerprints(con: duckdb.DuckDBPyConnection, table: str, by: str | None = None) -> dict[str, str]:
    """Row count and the sum of the rows' hashes, for the whole table (key "") or for each value of `by`:
    two equal fingerprints mean the same rows (in any order), so the files written from them still hold."""
    group = f"{quote(by)}" if by else "''"
    rows = con.execute(f"select {group}, count(*), coalesce(sum(hash(exported_row)::hugeint), 0) from {table} exported_row group by all").fetchall()
    return {str(key): f"{n}:{total}" for key, n, total in rows}


def _copy_whole(con: duckdb.DuckDBPyConnection, table: str, folder: Path, stem: str) -> None:
    for fmt, options in FORMATS:
        with atomic_path(folder / f"{stem}.{fmt}") as tmp:
            con.execute(f"copy (select * from {table} order by all) to {_sql_path(tmp)} ({options})")


def _copy_partitions(con: duckdb.DuckDBPyConnection, table: str, target: Path, values: list[str]) -> None:
    """Write `target/benchmark=<value>/data.{parquet,csv}` for each of `values`, each replaced whole: the new
    files are written beside the folder and a benchmark's subfolder is swapped in by renames."""
    staging = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for fmt, options in FORMATS:
        con.execute(
            f"copy (select * from {table} where {quote(PARTITION_COLUMN)} in (select unnest(?)) order by all) to {_sql_path(staging / fmt)} "
            f"({options}, partition_by ({quote(PARTITION_COLUMN)}), write_partition_columns true, filename_pattern '{PARTITION_FILE}')",
            [values],
        )
    target.mkdir(exist_ok=True)
    for value in values:
        part = f"{PARTITION_COLUMN}={value}"
        fresh = staging / part
        fresh.mkdir()
        for fmt, _ in FORMATS:
            # DuckDB numbers the files of a partition from 0: one file each here (a partition is written whole).
            (written,) = (staging / fmt / part).glob(f"{PARTITION_FILE}*.{fmt}")
            written.replace(fresh / f"{PARTITION_FILE}.{fmt}")
        old = staging / f"{part}.old"
        if (target / part).exists():
            (target / part).replace(old)
        fresh.replace(target / part)
        shutil.rmtree(old, ignore_errors=True)
    shutil.rmtree(staging)


def _partition_files_exist(target: Path, value: str) -> bool:
    return all((target / f"{PARTITION_COLUMN}={value}" / f"{PARTITION_FILE}.{fmt}").exists() for fmt, _ in FORMATS)


def export_tables(
    con: duckdb.DuckDBPyConnection, folder: Path, previous: Iterable[Mapping] = (), *, row_limit: int = ROW_LIMIT
) -> list[dict]:
    """Write every exported table into `folder` and return what was written (the rows of exports.json).

    A table of at most `row_limit` rows (or without a `benchmark` column) is `<schema>.<table>.parquet` and `.csv`;
    a longer one is the folder `<schema>.<table>/` with `benchmark=<slug>/data.parquet` and `data.csv`. `previous` is
    the last export's listing: a table, or a benchmark's part of a table, whose columns and fingerprint (row count
    and sum of row hashes) it records, and whose files are still there, is not written again.
    """
    folder.mkdir(parents=True, exist_ok=True)
    before = {row["table"]: row for row in previous}
    written = []
    for schema, name in exported_tables(con):
        table, stem = f"{quote(schema)}.{quote(name)}", f"{schema}.{name}"
        columns, digest = _columns(con, schema, name)
        last = before.get(stem, {})
        same_columns = last.get("columns") == digest
        n_rows = con.execute(f"select count(*) from {table}").fetchone()[0]
        if PARTITION_COLUMN in columns and n_rows > row_limit:
            target = folder / stem
            prints = _fingerprints(con, table, PARTITION_COLUMN)
            kept = last.get("fingerprint") if same_columns and last.get("partitioned_by") == PARTITION_COLUMN else {}
            changed = sorted(v for v, fp in prints.items() if kept.get(v) != fp or not _partition_files_exist(target, v))
            if changed:
                _copy_partitions(con, table, target, changed)
            for part in target.iterdir():
                if part.name.removeprefix(f"{PARTITION_COLUMN}=") not in prints:
                    shutil.rmtree(part)
            row = {"parquet": f"{stem}/", "csv": f"{stem}/", "partitioned_by": PARTITION_COLUMN, "written": len(changed)}
        else:
            prints = _fingerprints(con, table)
            files = [folder / f"{stem}.{fmt}" for fmt, _ in FORMATS]
            unchanged = same_columns and last.get("fingerprint") == prints and all(path.is_file() for path in files)
            if not unchanged:
                _copy_whole(con, table, folder, stem)
            row = {"parquet": f"{stem}.parquet", "csv": f"{stem}.csv", "partitioned_by": None, "written": 0 if unchanged else 1}
        written.append({"table": stem, "rows": n_rows, **row, "columns": digest, "fingerprint": prints})
    # A table that is no longer exported (dropped, or now left out), or now exported the other way, leaves no file behind.
    current = {row[fmt].rstrip("/") for row in written for fmt in ("parquet", "csv")}
    for schema in EXPORTED_SCHEMAS:
        for path in folder.glob(f"{schema}.*"):
            if path.name in current:
                continue
            if path.is_dir():
                shutil.rmtree(path)
            elif path.suffix in (".parquet", ".csv"):
                path.unlink()
    return written


def column_types(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    rows = con.execute(
        "select table_schema || '.' || table_name, column_name, data_type from information_schema.columns "
        "where table_schema in (select unnest(?)) order by table_schema, table_name, ordinal_position",
        [list(EXPORTED_SCHEMAS)],
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for table, column, dtype in rows:
        if tuple(table.split(".", 1)) not in NOT_EXPORTED:
            out.setdefault(table, []).append((column, dtype))
    return out


def dbt_descriptions(manifest: Mapping, catalog: Mapping) -> dict[str, dict]:
    """`schema.table` → {description, columns: {name: (type, description)}} from dbt's manifest + catalog."""
    out = {}
    for unique_id, node in manifest.get("nodes", {}).items():
        if node.get("resource_type") != "model":
            continue
        table = f"{node['schema']}.{node.get('alias') or node['name']}"
        typed = {c.lower(): v.get("type", "") for c, v in catalog.get("nodes", {}).get(unique_id, {}).get("columns", {}).items()}
        columns = {name.lower(): (typed.get(name.lower(), ""), meta.get("description", "")) for name, meta in node.get("columns", {}).items()}
        for name, dtype in typed.items():
            columns.setdefault(name, (dtype, ""))
        out[table] = {"description": node.get("description", ""), "columns": columns, "source": "dbt docs (manifest.json + catalog.json)"}
    return out


def data_dictionary(
    types: Mapping[str, list[tuple[str, str]]],
    dbt_docs: Mapping[str, dict],
    asset_descriptions: Mapping[str, str],
    exports: pd.DataFrame,
) -> tuple[str, list[dict]]:
    """The dictionary as Markdown and as rows (table, column, type, description, documented by)."""
    rows_by_table = dict(zip(exports["table"], exports["rows"])) if len(exports) else {}
    lines = [
        "# Data dictionary",
        "",
        "Every table exported to this folder as `<schema>.<table>.parquet` and `.csv`. The marts are dbt models: their",
        "descriptions and column types come from `dbt docs generate` (the same text as `make docs`). The analysis tables are",
        "written by Python assets: their descriptions are the Dagster asset descriptions, their columns are described in",
        "`workbank_dagster/analysis/columns.py` and their types come from DuckDB.",
        "",
    ]
    records = []
    for table, columns in types.items():
        docs = dbt_docs.get(table)
        description = docs["description"] if docs else asset_descriptions.get(table, "")
        source = docs["source"] if docs else "Dagster asset description, analysis/columns.py; types from DuckDB"
        lines += [f"## `{table}`", "", description or "(no description)", "", f"{rows_by_table.get(table, '?')} rows · documented by: {source}", "",
                  "| column | type | description |", "| --- | --- | --- |"]
        for column, dtype in columns:
            if docs:
                col_type, col_doc = docs["columns"].get(column.lower(), ("", ""))
            else:
                col_type, col_doc = "", column_description(table.split(".", 1)[1], column)
            col_type = col_type or dtype
            lines.append(f"| `{column}` | {col_type} | {col_doc.replace('|', '/').strip()} |")
            records.append({"table": table, "column": column, "type": col_type, "description": col_doc, "documented_by": source})
        lines.append("")
    return "\n".join(lines) + "\n", records


# report/assets.py writes its files with these names.
write_text_atomic = write_text


def write_json_atomic(path: Path, value) -> Path:
    return write_text(path, json.dumps(value, indent=2, sort_keys=True, default=str) + "\n")
