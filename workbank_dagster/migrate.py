"""`python -m workbank_dagster.cli migrate`: bring a warehouse made by an older checkout up to this
one. Run it once; a run never does it.

What it does, each step a no-op when there is nothing to do:

- drops the warehouse tables that per-benchmark rows lived in before they moved to per-benchmark
  Parquet files (partition_files.py): the sources' prompts, results and file errors, the labeling
  tables of both judges and the default judge's candidates;
- drops the tables where source loads (`raw._source_loads`) and embedded label keys
  (`labeling.embedded_label_inputs`) were recorded before they moved into the assets'
  materializations;
- turns the coverage history into the append-only table this checkout extends. An older checkout
  rebuilt `analysis.coverage_history` from the headline's materializations in the Dagster instance
  on every run; this one appends a row per refresh and never reads the instance. The rows are
  rebuilt once from those materializations, with each benchmark's prompts version (the new column
  `benchmark_versions`), so the history goes on where it was. With no instance at hand, the old rows
  stay and get the column empty.

Left in place, these tables answer no query of the pipeline, but a reader browsing the warehouse
would take them for current data. The names are those the tables had when they were retired, not
the current constants: they are history.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from . import warehouse
from .analysis.columns import BENCHMARK_VERSIONS_METADATA, HEADLINE_NUMBERS_METADATA
from .analysis.history import HISTORY_CONTRACT, enforce_contract, history_table

HEADLINE_KEY = dg.AssetKey(["report", "headline"])
HISTORY = ("analysis", "coverage_history")

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


def headline_records(instance: dg.DagsterInstance) -> list[dict]:
    """Every materialization of the headline the instance holds, oldest first, as `history_table` takes them."""
    records, cursor = [], None
    while True:
        page = instance.fetch_materializations(HEADLINE_KEY, limit=500, cursor=cursor, ascending=True)
        for record in page.records:
            metadata = record.asset_materialization.metadata
            records.append(
                {
                    "materialized_at": record.timestamp,
                    "run_id": record.run_id,
                    "numbers": getattr(metadata.get(HEADLINE_NUMBERS_METADATA), "value", None),
                    "benchmarks": getattr(metadata.get(BENCHMARK_VERSIONS_METADATA), "value", None),
                }
            )
        if not page.has_more:
            return records
        cursor = page.cursor


def history_into_warehouse(con, instance: dg.DagsterInstance | None) -> list[str]:
    """An older checkout's coverage history as the append-only table of this one (the module's
    docstring); nothing when the table already has this checkout's columns, or there is no history."""
    schema, table = HISTORY
    name = f"{schema}.{table}"
    exists = warehouse.table_exists(con, schema, table)
    if exists and [row[0] for row in con.execute(f"describe {name}").fetchall()] == list(HISTORY_CONTRACT):
        return []
    records = headline_records(instance) if instance is not None else []
    if records:
        frame = enforce_contract(history_table(records), HISTORY_CONTRACT, name)
        warehouse.replace_table(con, schema, table, frame)
        return [f"rebuilt {name} from the instance's {len(frame)} headline materializations, with their benchmark versions"]
    if exists:
        con.execute(f"alter table {name} add column benchmark_versions varchar")
        return [f"added the empty column benchmark_versions to {name} (no headline materialization in the instance)"]
    return []


def migrate(duckdb_path: Path, instance: dg.DagsterInstance | None = None) -> list[str]:
    """`cli migrate` on the warehouse at `duckdb_path` (and the Dagster instance an older checkout
    kept its history in): what it changed, one line each."""
    if not Path(duckdb_path).is_file():
        return []
    with warehouse.connect(duckdb_path) as con:
        return [f"dropped {name}" for name in drop_retired_tables(con)] + history_into_warehouse(con, instance)
