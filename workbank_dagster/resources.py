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


class ChatModelResource(dg.ConfigurableResource):
    """The chat model behind the LLM judge: the OpenAI API or any OpenAI-compatible server.

    The API key is read from the environment variable named by `api_key_env` when a request is
    made; it is never a config value, so it never reaches logs, metadata or the run storage.
    """

    model: str = "gpt-4o-mini"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    timeout_s: float = 60.0
    max_attempts: int = 5
    concurrency: int = 4
    failure_budget: int = 20
    spend_cap_usd: float = 5.0
    input_usd_per_mtok: float = 0.15
    output_usd_per_mtok: float = 0.60
    max_labels: int = 3

    def llm_settings(self):
        """The judge's settings: every field of LLMSettings this resource also has."""
        from dataclasses import fields

        from .labeling.llm import LLMSettings

        return LLMSettings(**{f.name: getattr(self, f.name) for f in fields(LLMSettings) if f.name in type(self).model_fields})


def default_chat_model() -> ChatModelResource:
    import os

    env = os.environ
    return ChatModelResource(
        model=env.get("WORKBANK_LLM_MODEL", "gpt-4o-mini"),
        base_url=env.get("WORKBANK_LLM_BASE_URL") or None,
        api_key_env=env.get("WORKBANK_LLM_API_KEY_ENV", "OPENAI_API_KEY"),
        concurrency=int(env.get("WORKBANK_LLM_CONCURRENCY", "4")),
        spend_cap_usd=float(env.get("WORKBANK_LLM_SPEND_CAP_USD", "5.0")),
        input_usd_per_mtok=float(env.get("WORKBANK_LLM_INPUT_USD_PER_MTOK", "0.15")),
        output_usd_per_mtok=float(env.get("WORKBANK_LLM_OUTPUT_USD_PER_MTOK", "0.60")),
    )
