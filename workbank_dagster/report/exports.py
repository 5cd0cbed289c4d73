"""Exports: every mart and analysis table as Parquet and CSV, and a data dictionary from the dbt docs.

Files are written in a stable row order (`order by all`) to a temporary name and moved into place,
so a reader never sees half a file and an unchanged table rewrites identical bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import duckdb
import pandas as pd

from ..analysis.columns import column_description
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


def export_tables(con: duckdb.DuckDBPyConnection, folder: Path) -> pd.DataFrame:
    """Write `<folder>/<schema>.<table>.{parquet,csv}` for every exported table; return what was written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for schema, name in exported_tables(con):
        relation = f"(select * from {quote(schema)}.{quote(name)} order by all)"
        stem = f"{schema}.{name}"
        for fmt, options in (("parquet", "(format parquet, compression zstd)"), ("csv", "(format csv, header true)")):
            final = folder / f"{stem}.{fmt}"
            tmp = folder / f".{stem}.{fmt}.tmp"
            con.execute(f"copy {relation} to {_sql_path(tmp)} {options}")
            tmp.replace(final)
        n_rows = con.execute(f"select count(*) from {quote(schema)}.{quote(name)}").fetchone()[0]
        written.append({"table": stem, "rows": n_rows, "parquet": f"{stem}.parquet", "csv": f"{stem}.csv"})
    # A table that is no longer exported (dropped, or now left out) leaves no file behind.
    current = {row[fmt] for row in written for fmt in ("parquet", "csv")}
    for schema in EXPORTED_SCHEMAS:
        for path in [*folder.glob(f"{schema}.*.parquet"), *folder.glob(f"{schema}.*.csv")]:
            if path.name not in current:
                path.unlink()
    return pd.DataFrame(written, columns=["table", "rows", "parquet", "csv"])


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


def write_text_atomic(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def write_json_atomic(path: Path, value) -> Path:
    return write_text_atomic(path, json.dumps(value, indent=2, sort_keys=True, default=str) + "\n")
