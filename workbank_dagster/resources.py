"""The Dagster resource every layer shares: the DuckDB warehouse (the settings are in settings.py;
the chat model, the embedder and the task index, which only labeling uses, are in labeling/)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb

from . import warehouse


class Warehouse:
    """The DuckDB file every asset reads and writes. Connections are short-lived (see warehouse.py)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)

    @contextlib.contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with warehouse.connect(self.path) as con:
            yield con

    def query(self, sql: str, params: list | None = None):
        with self.connect() as con:
            return con.execute(sql, params or []).df()

    def query_if_exists(self, schema: str, table: str, sql: str):
        """`sql` over `schema.table` (`{table}` in it), or None where the table does not exist (warehouse.query_if_exists)."""
        with self.connect() as con:
            return warehouse.query_if_exists(con, schema, table, sql)


# An asset's `warehouse_db` parameter: the run's Warehouse.
WarehouseResource = dg.ResourceParam[Warehouse]


@dg.resource(
    required_resource_keys={"pipeline_settings"},
    description="The DuckDB warehouse at the run's pipeline_settings.duckdb_path: a launchpad or run-config value of "
    "duckdb_path moves it (and dbt's profile) with the settings; it has no path of its own.",
)
def warehouse_from_settings(context: dg.InitResourceContext) -> Warehouse:
    return Warehouse(context.resources.pipeline_settings.resolve().duckdb_path)
