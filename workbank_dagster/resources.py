"""Dagster resources: the DuckDB warehouse and the chat model (the settings are in settings.py, the
embedder and task index in labeling/matching.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import fields

import dagster as dg
import duckdb
from pydantic import Field

from . import warehouse
from .labeling.llm import LLMSettings
from .settings import from_environment

# The LLM judge's defaults are written once, in labeling/llm.py (LLMSettings).
LLM_DEFAULTS = LLMSettings()
DEFAULT_API_KEY_VARIABLE = "OPENAI_API_KEY"


def chat_model_variable(field: str) -> str:
    """The environment variable of a ChatModelResource field (`api_key_env`: the one naming the key's)."""
    return f"WORKBANK_LLM_{field.upper()}"


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


class ChatModelResource(dg.ConfigurableResource):
    """The chat model behind the LLM judge: the OpenAI API or any OpenAI-compatible server
    (resource key `chat_model`). Its defaults are LLMSettings' (labeling/llm.py).

    `api_key` is the one setting given as a `dg.EnvVar`: the run storage, the launchpad and the logs
    hold the variable's name, never its value. An unset variable fails only the launches that need
    the chat model (the LLM job), with Dagster's message naming the variable.
    """

    api_key: str = Field(description=f"The API key: an EnvVar ({DEFAULT_API_KEY_VARIABLE}, or the variable {chat_model_variable('api_key_env')} names).")
    model: str = Field(default=LLM_DEFAULTS.model, description="The chat model; the labeler is recorded as llm:<model>:<template>.")
    base_url: str | None = Field(default=LLM_DEFAULTS.base_url, description="An OpenAI-compatible server's /v1 URL; unset: the OpenAI API.")
    temperature: float = Field(default=LLM_DEFAULTS.temperature, ge=0, description="Sampling temperature.")
    timeout_s: float = Field(default=LLM_DEFAULTS.timeout_s, gt=0, description="Time-out of every API call, in seconds.")
    max_attempts: int = Field(default=LLM_DEFAULTS.max_attempts, ge=1, description="Attempts per API call (the client retries) and per prompt (asking again after a bad answer).")
    batch_control_attempts: int = Field(
        default=LLM_DEFAULTS.batch_control_attempts, ge=1,
        description="Attempts per Batch control call (upload, create, list, poll, download); past them the step fails and its retry policy runs it again.",
    )
    concurrency: int = Field(default=LLM_DEFAULTS.concurrency, ge=1, description="Requests in flight at once.")
    failure_budget: int = Field(default=LLM_DEFAULTS.failure_budget, ge=0, description="Failed prompts tolerated before the run stops.")
    spend_cap_usd: float = Field(default=LLM_DEFAULTS.spend_cap_usd, ge=0, description="The run stops before spending more than this (USD).")
    input_usd_per_mtok: float = Field(default=LLM_DEFAULTS.input_usd_per_mtok, ge=0, description="Price per million prompt tokens (USD).")
    output_usd_per_mtok: float = Field(default=LLM_DEFAULTS.output_usd_per_mtok, ge=0, description="Price per million completion tokens (USD).")
    max_labels: int = Field(default=LLM_DEFAULTS.max_labels, ge=1, description="Tasks the model may choose per prompt.")

    def llm_settings(self) -> LLMSettings:
        """The judge's settings: every field of LLMSettings this resource also has."""
        return LLMSettings(**{f.name: getattr(self, f.name) for f in fields(LLMSettings) if f.name in type(self).model_fields})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ChatModelResource:
        """The chat model as the environment configures it (`WORKBANK_LLM_<FIELD>`), read and checked
        as PipelineSettings is; the key is `EnvVar(WORKBANK_LLM_API_KEY_ENV or OPENAI_API_KEY)`."""
        environ = os.environ if environ is None else environ
        key = dg.EnvVar(environ.get(chat_model_variable("api_key_env")) or DEFAULT_API_KEY_VARIABLE)
        return from_environment(cls, environ, chat_model_variable, api_key=key)
