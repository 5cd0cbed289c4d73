"""Content hashes of a whole warehouse and of the output folder, to compare two runs.

Two levels:

* exact: `warehouse.table_hash` of every table and view (order-independent, every bit), and the
  SHA-256 of every output file;
* canonical: the same, except that floating-point values count to 10 significant digits and the
  fields that are timestamps by nature (dbt's `generated_at`, `invocation_id`) are left out.

Why both: DuckDB sums doubles in whatever order its threads meet them, so a `sum()` can differ in
the last bit (relative 1e-16) from one run to the next; that is noise, not a different result, and
the tests assert on the canonical hashes. The exact differences are still collected and reported
(`report_exact_differences`) so that such noise is visible; set WORKBANK_TEST_STRICT_HASH=1 to
assert on them too.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import warnings
from pathlib import Path

import duckdb

from workbank_dagster import warehouse

FLOAT_TYPES = ("DOUBLE", "FLOAT", "REAL")
SIGNIFICANT_DIGITS = 10
# Files that record when or with which inputs they were built, not what they contain.
STAMP_FILE = re.compile(r"(^|/)\.[^/]*$")  # hidden files: input stamps of memoised assets
# The sources' load logs (sources/load_memo.py): when and in which run each load read a file; two
# folders that loaded the same files compare without those two columns, each load once.
LOAD_LOG = re.compile(r"(^|/)(source_loads|[a-z0-9_]+_loads)/[^/]+\.parquet$")
TIMESTAMP_FIELDS = ("generated_at", "invocation_id", "invocation_started_at", "run_started_at", "created_at")
STRICT = os.environ.get("WORKBANK_TEST_STRICT_HASH") == "1"
# Tables that log the runs themselves (a row per materialization of the headline): two folders that
# reached the same state through other refreshes, or the same folder run again, differ there by
# design. They are left out of the canonical level, with what prints their row count (their exports,
# the exports listing, the data dictionary) and what draws them (the report's history section and
# its figure); the tests that own them check them (test_history, test_idempotency, test_removal).
LOG_TABLES = ("analysis.coverage_history",)
LOG_FILES = tuple(f"tables/{table}.{suffix}" for table in LOG_TABLES for suffix in ("csv", "parquet")) + ("report/figures/coverage_history.svg",)


def _canonical_select(con: duckdb.DuckDBPyConnection, source: str) -> str:
    columns = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
    parts = []
    for name, dtype, *_ in columns:
        column = warehouse.quote(name)
        if str(dtype).upper() in FLOAT_TYPES:
            # + 0.0 turns -0.0 into 0.0; %.9e keeps 10 significant digits.
            parts.append(f"printf('%.{SIGNIFICANT_DIGITS - 1}e', {column}::DOUBLE + 0.0) AS {column}")
        else:
            parts.append(column)
    return f"SELECT {', '.join(parts) or '1'} FROM {source}"


def canonical_hash(con: duckdb.DuckDBPyConnection, source: str) -> str:
    """Order-independent hash of a relation (`schema.table`, or `read_parquet('...')`)."""
    row = con.execute(f"SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM ({_canonical_select(con, source)}) AS t").fetchone()
    return f"{row[0]}:{row[1]}"


def warehouse_tables(db_path: Path | str) -> dict[str, str]:
    """`schema.table` -> 'BASE TABLE' or 'VIEW', for every relation outside DuckDB's own schemas."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        rows = con.execute(
            "SELECT table_schema, table_name, table_type FROM information_schema.tables "
            "WHERE table_catalog = current_database() AND table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()
    return {f"{schema}.{name}": kind for schema, name, kind in rows}


def warehouse_hashes(db_path: Path | str) -> dict[str, dict[str, str]]:
    """{'exact': {table: hash}, 'canonical': {table: hash}} for every table and view."""
    exact, canonical = {}, {}
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        for name in warehouse_tables(db_path):
            schema, table = name.split(".", 1)
            exact[name] = warehouse.table_hash(con, schema, table)
            if name not in LOG_TABLES:
                canonical[name] = canonical_hash(con, f"{warehouse.quote(schema)}.{warehouse.quote(table)}")
    finally:
        con.close()
    return {"exact": exact, "canonical": canonical}


def _round_json(value):
    if isinstance(value, float):
        return "nan" if math.isnan(value) else float(f"{value + 0.0:.{SIGNIFICANT_DIGITS - 1}e}")
    if isinstance(value, dict):
        return {k: _round_json(v) for k, v in value.items() if k not in TIMESTAMP_FIELDS}
    if isinstance(value, list):
        return [_round_json(v) for v in value]
    return value


def _canonical_listing(value):
    """The exports listing (a list of {table, rows, ..., fingerprint}) with the log tables' row counts
    left out, and every table's fingerprint: it is a bit-level digest of the rows (count and sum of
    row hashes), and the snapshot compares the tables themselves canonically (their exported files)."""
    if isinstance(value, list):
        return [
            {**v, "fingerprint": None, **({"rows": None} if v.get("table") in LOG_TABLES else {})} if isinstance(v, dict) else v
            for v in value
        ]
    return value


def _canonical_text(text: str, roots: list[str]) -> str:
    for root in roots:
        text = text.replace(root, "<root>")  # dbt docs name the compiled files by absolute path
    for table in LOG_TABLES:  # the data dictionary's row count of a log, and the report's history section
        text = re.sub(rf"(## `{re.escape(table)}`\n\n[^\n]*\n\n)\d+ rows", r"\1<n> rows", text)
    text = re.sub(r'<section id="history">.*?</section>', '<section id="history"></section>', text, flags=re.DOTALL)
    for field in TIMESTAMP_FIELDS:
        text = re.sub(rf'("{field}"\s*:\s*)("[^"]*"|[-+0-9.eE]+)', r'\1""', text)
    # Plotly figures embed their data as base64 float64 arrays: the tables they are drawn from are
    # compared (canonically) on their own.
    text = re.sub(r'("bdata"\s*:\s*)"[^"]*"', r'\1""', text)
    return text


def file_hashes(folder: Path, root: Path | None = None, copied_from: Path | None = None) -> dict[str, dict[str, str]]:
    """{'exact': {relative path: sha256}, 'canonical': {...}} for every file under `folder`.

    Canonical: JSON parsed with floats rounded and timestamp fields dropped; CSV and Parquet read
    back and hashed like a table; HTML, SVG and text with timestamp fields, plot data and the
    absolute path `root` (the data folder) blanked, and `copied_from` (the data folder it was
    copied from, whose paths the copied files still name). Hidden files (input stamps) are left out
    of the canonical level.
    """
    roots = [str(path) for path in (root, copied_from) if path]
    exact, canonical = {}, {}
    con = duckdb.connect()
    try:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = path.relative_to(folder).as_posix()
            data = path.read_bytes()
            exact[rel] = hashlib.sha256(data).hexdigest()
            if STAMP_FILE.search(rel) or rel in LOG_FILES:
                continue
            suffix = path.suffix.lower()
            literal = str(path).replace("'", "''")
            if suffix == ".json":
                digest = hashlib.sha256(json.dumps(_canonical_listing(_round_json(json.loads(data))), sort_keys=True).encode()).hexdigest()
            elif suffix == ".parquet" and LOAD_LOG.search(rel):
                digest = canonical_hash(con, f"(select distinct * exclude (loaded_at, run_id) from read_parquet('{literal}'))")
            elif suffix == ".parquet":
                digest = canonical_hash(con, f"read_parquet('{literal}')")
            elif suffix == ".csv":
                digest = canonical_hash(con, f"read_csv('{literal}', header = true, all_varchar = false, sample_size = -1)") if data.strip() else "empty"
            else:
                try:
                    digest = hashlib.sha256(_canonical_text(data.decode("utf-8"), roots).encode()).hexdigest()
                except UnicodeDecodeError:
                    digest = exact[rel]
            canonical[rel] = digest
    finally:
        con.close()
    return {"exact": exact, "canonical": canonical}


def differences(first: dict[str, str], second: dict[str, str]) -> list[str]:
    """Names whose hash differs, or that only one side has (marked)."""
    names = sorted(set(first) | set(second))
    out = []
    for name in names:
        if name not in second:
            out.append(f"{name} (only in the first)")
        elif name not in first:
            out.append(f"{name} (only in the second)")
        elif first[name] != second[name]:
            out.append(name)
    return out


def report_exact_differences(label: str, first: dict[str, str], second: dict[str, str], artifact: Path | None = None) -> list[str]:
    """Warn about (and, under WORKBANK_TEST_STRICT_HASH=1, fail on) bit-level differences. The logs,
    and the two files that print their row counts, differ bitwise from run to run by design."""
    by_design = {*LOG_TABLES, *LOG_FILES, "tables/exports.json", "tables/DATA_DICTIONARY.md"}
    shared = {k: first[k] for k in first if k in second and k not in by_design}
    diff = differences(shared, {k: second[k] for k in shared})
    if artifact is not None:
        artifact.parent.mkdir(parents=True, exist_ok=True)
        artifact.write_text(json.dumps({"label": label, "exact_differences": diff}, indent=2) + "\n")
    if diff:
        message = (
            f"{label}: {len(diff)} differ bit for bit though equal canonically (floats to {SIGNIFICANT_DIGITS} significant "
            f"digits, timestamps and absolute paths left out): {', '.join(diff)}"
        )
        if STRICT:
            raise AssertionError(message)
        warnings.warn(message, stacklevel=2)
    return diff
