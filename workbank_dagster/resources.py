"""Dagster resources: the DuckDB warehouse, the embedder and the chat-model client."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import dagster as dg
import duckdb

from . import warehouse
from .labeling.llm import LLMSettings
from .settings import env_float, env_int, load_settings

# The LLM judge's defaults are written once, in labeling/llm.py (LLMSettings).
LLM_DEFAULTS = LLMSettings()


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

    model: str = LLM_DEFAULTS.model
    base_url: str | None = LLM_DEFAULTS.base_url
    api_key_env: str = LLM_DEFAULTS.api_key_env
    temperature: float = LLM_DEFAULTS.temperature
    timeout_s: float = LLM_DEFAULTS.timeout_s
    max_attempts: int = LLM_DEFAULTS.max_attempts
    concurrency: int = LLM_DEFAULTS.concurrency
    failure_budget: int = LLM_DEFAULTS.failure_budget
    spend_cap_usd: float = LLM_DEFAULTS.spend_cap_usd
    input_usd_per_mtok: float = LLM_DEFAULTS.input_usd_per_mtok
    output_usd_per_mtok: float = LLM_DEFAULTS.output_usd_per_mtok
    max_labels: int = LLM_DEFAULTS.max_labels

    def llm_settings(self):
        """The judge's settings: every field of LLMSettings this resource also has."""
        from dataclasses import fields

        from .labeling.llm import LLMSettings

        return LLMSettings(**{f.name: getattr(self, f.name) for f in fields(LLMSettings) if f.name in type(self).model_fields})


def default_chat_model() -> ChatModelResource:
    """The chat model as the environment configures it (WORKBANK_LLM_*), read with the same typed
    parsers as every other setting: a bad value names its variable."""
    import os

    env = os.environ
    return ChatModelResource(
        model=env.get("WORKBANK_LLM_MODEL") or LLM_DEFAULTS.model,
        base_url=env.get("WORKBANK_LLM_BASE_URL") or LLM_DEFAULTS.base_url,
        api_key_env=env.get("WORKBANK_LLM_API_KEY_ENV") or LLM_DEFAULTS.api_key_env,
        concurrency=env_int("WORKBANK_LLM_CONCURRENCY", LLM_DEFAULTS.concurrency),
        spend_cap_usd=env_float("WORKBANK_LLM_SPEND_CAP_USD", LLM_DEFAULTS.spend_cap_usd),
        input_usd_per_mtok=env_float("WORKBANK_LLM_INPUT_USD_PER_MTOK", LLM_DEFAULTS.input_usd_per_mtok),
        output_usd_per_mtok=env_float("WORKBANK_LLM_OUTPUT_USD_PER_MTOK", LLM_DEFAULTS.output_usd_per_mtok),
    )
