"""The Dagster resource every layer shares: the DuckDB warehouse (the settings are in settings.py;
the chat model, the embedder and the task index, which only labeling uses, are in labeling/).

No `from __future__ import annotations` here: Dagster reads `ResourceDependency[...]` from the
class's evaluated annotations, and a string annotation refuses the paths given at launch."""

import contextlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb

from . import warehouse
from .settings import PathSettings


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


class WarehouseFromSettings(dg.ConfigurableResource):
    """The DuckDB warehouse at the run's paths.duckdb_path: a launchpad or run-config value of
    duckdb_path moves it (and dbt's profile) with the settings; it has no path of its own. The paths
    it follows are the run's only when the definitions give `paths` as configurable at launch
    (definitions.py): a resource built whole is nested as built."""

    paths: dg.ResourceDependency[PathSettings]

    def create_resource(self, context: dg.InitResourceContext) -> Warehouse:
        return Warehouse(self.paths.resolved()["duckdb_path"])
