"""The per-benchmark tables as a test reads them: each a view over its Parquet files.

The partition steps write one file per table and benchmark (workbank_dagster/partition_files.py)
and never the warehouse; a test that asks "what rows does raw.benchmark_prompts hold" asks these
files. `partition_tables(folder)` is an in-memory DuckDB connection where `raw.benchmark_prompts`,
`labeling.embedded_labels` and the rest are views over them (a table with no file has no view).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import duckdb

SCHEMAS = {
    "raw": ("benchmark_prompts", "benchmark_results", "benchmark_prompts_file_errors", "benchmark_results_file_errors"),
    "labeling": ("embedded_labels", "embedded_judgements", "embedded_candidates", "llm_labels", "llm_judgements"),
}


@contextlib.contextmanager
def partition_tables(folder: Path | str) -> Iterator[duckdb.DuckDBPyConnection]:
    folder = Path(folder)
    con = duckdb.connect()
    try:
        for schema, tables in SCHEMAS.items():
            con.execute(f"CREATE SCHEMA {schema}")
            for table in tables:
                if any((folder / table).glob("*.parquet")):
                    pattern = str(folder / table / "*.parquet").replace("'", "''")
                    con.execute(f"CREATE VIEW {schema}.{table} AS SELECT * FROM read_parquet('{pattern}', union_by_name = true)")
        yield con
    finally:
        con.close()
