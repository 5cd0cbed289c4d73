"""`python -m workbank_dagster.cli migrate`: bring a warehouse made by an older checkout up to this
one. Run it once; a run never does it.

What it does, each step a no-op when there is nothing to do:

- drops the warehouse tables that per-benchmark rows lived in before they moved to per-benchmark
  Parquet files (partition_files.py): the sources' prompts, results and file errors, the labeling
  tables of both judges and the default judge's candidates;
- drops the tables where source loads (`raw._source_loads`) and embedded label keys
  (`labeling.embedded_label_inputs`) were recorded before they moved into the assets'
  materializations.

Left in place, these tables answer no query of the pipeline, but a reader browsing the warehouse
would take them for current data. The names are those the tables had when they were retired, not
the current constants: they are history.
"""

from __future__ import annotations

from pathlib import Path

from . import warehouse

RETIRED_TABLES: dict[str, tuple[str, ...]] = {
    "raw": ("benchmark_prompts", "benchmark_results", "_benchmark_file_errors", "_source_loads"),
    "labeling": (
        "embedded_labels", "embedded_judgements", "llm_labels", "llm_judgements", "embedded_candidates", "embedded_label_inputs",
    ),
}


def drop_retired_tables(con) -> list[str]:
    """Drop every retired table the warehouse still holds; the ones dropped, as `schema.table`."""
    dropped = []
    for schema, tables in RETIRED_TABLES.items():
        for table in tables:
            if warehouse.table_exists(con, schema, table):
                con.execute(f"DROP TABLE {warehouse.quote(schema)}.{warehouse.quote(table)}")
                dropped.append(f"{schema}.{table}")
    return dropped


def migrate(duckdb_path: Path) -> list[str]:
    """`cli migrate` on the warehouse at `duckdb_path`: what it changed, one line each."""
    if not Path(duckdb_path).is_file():
        return []
    with warehouse.connect(duckdb_path) as con:
        return [f"dropped {name}" for name in drop_retired_tables(con)]
