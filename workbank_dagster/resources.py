"""The Dagster resource every layer shares: the DuckDB warehouse (the settings are in settings.py;
the chat model, the embedder and the task index, which only labeling uses, are in labeling/)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import dagster as dg
import duckdb

from . import warehouse


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
