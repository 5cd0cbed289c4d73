"""Dagster resources: the DuckDB warehouse, the embedder and the chat-model client."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import dagster as dg
import duckdb

from . import warehouse
from .settings import load_settings


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB file every asset reads and writes. Connections are short-lived (see warehouse.py)."""

    path: str

    @contextlib.contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with warehouse.connect(self.path) as con:
            yield con

    def query(self, sql: str, params: list | None = None):
        with self.connect() as con:
            return con.execute(sql, params or []).df()


def default_warehouse() -> WarehouseResource:
    return WarehouseResource(path=str(load_settings().duckdb_path))
