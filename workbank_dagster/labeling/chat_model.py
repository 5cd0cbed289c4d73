"""The chat model behind the LLM judge: one class, `ChatModelResource` (resource key `chat_model`),
declares every setting once, with its default and meaning. `LLMSettings`, what the judge's pure code
takes (llm_judge.py), spells out its fields but the key, with their defaults, as `Settings` spells out
`PipelineSettings`' (a test keeps each equal to its resource)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import dagster as dg
from pydantic import Field

from ..environment import from_environment

DEFAULT_API_KEY_VARIABLE = "OPENAI_API_KEY"


def chat_model_variable(field: str) -> str:
    """The environment variable of a ChatModelResource field (`api_key_env`: the one naming the key's)."""
    return f"WORKBANK_LLM_{field.upper()}"


class ChatModelResource(dg.ConfigurableResource):
    """The chat model behind the LLM judge: the OpenAI API or any OpenAI-compatible server.

    `api_key` is the one setting given as a `dg.EnvVar`: the run storage, the launchpad and the logs
    hold the variable's name, never its value. An unset variable fails only the launches that need
    the chat model (the LLM job), with Dagster's message naming the variable.
    """

    # How the settings table names the variable of a field that `from_env` does not read by its name.
    VARIABLE_NOTES: ClassVar[dict[str, str]] = {
        "api_key": f"`{DEFAULT_API_KEY_VARIABLE}` (`{chat_model_variable('api_key_env')}` names another)",
    }

    api_key: str = Field(description=f"The API key: an EnvVar ({DEFAULT_API_KEY_VARIABLE}, or the variable {chat_model_variable('api_key_env')} names).")
    model: str = Field(default="gpt-4o-mini", description="The chat model; the labeler is recorded as llm:<model>:<template>.")
    base_url: str | None = Field(default=None, description="An OpenAI-compatible server's /v1 URL; unset: the OpenAI API.")
    temperature: float = Field(default=0.0, ge=0, description="Sampling temperature.")
    timeout_s: float = Field(default=60.0, gt=0, description="Time-out of every API call, in seconds.")
    max_attempts: int = Field(default=5, ge=1, description="Attempts per API call (the client retries) and per prompt (asking again after a bad answer).")
    batch_control_attempts: int = Field(
        default=5, ge=1,
        description="Attempts per Batch control call (upload, create, list, poll, download); past them the step fails and its retry policy runs it again.",
    )
    backoff_s: float = Field(default=1.0, ge=0, description="Seconds before asking again after a malformed answer or one all outside the candidates, or before creating a batch again, doubling each time.")
    max_backoff_s: float = Field(default=60.0, ge=0, description="The longest of those waits, in seconds (a server's Retry-After too).")
    concurrency: int = Field(default=4, ge=1, description="Requests in flight at once.")
    failure_budget: int = Field(default=20, ge=0, description="Failed prompts tolerated before the run stops.")
    spend_cap_usd: float = Field(default=5.0, ge=0, description="The run stops before spending more than this (USD).")
    input_usd_per_mtok: float = Field(default=0.15, ge=0, description="Price per million prompt tokens (USD).")
    output_usd_per_mtok: float = Field(default=0.60, ge=0, description="Price per million completion tokens (USD).")
    batch_discount: float = Field(default=0.5, gt=0, le=1, description="The Batch API's price as a share of the synchronous one.")
    max_labels: int = Field(default=3, ge=1, description="Tasks the model may choose per prompt.")

    def llm_settings(self) -> LLMSettings:
        """The judge's settings: this resource's values but the key."""
        return LLMSettings(**{name: getattr(self, name) for name in SETTING_NAMES})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ChatModelResource:
        """The chat model as the environment configures it (`WORKBANK_LLM_<FIELD>`), read and checked
        as the settings resources are (environment.py); the key is `EnvVar(WORKBANK_LLM_API_KEY_ENV or OPENAI_API_KEY)`."""
        environ = os.environ if environ is None else environ
        key = dg.EnvVar(environ.get(chat_model_variable("api_key_env")) or DEFAULT_API_KEY_VARIABLE)
        return from_environment(cls, environ, chat_model_variable, api_key=key)


@dataclass(frozen=True)
class LLMSettings:
    """ChatModelResource's settings but the key (`ChatModelResource.llm_settings()`): what the judge's
    pure code takes, with the resource's defaults (`LLMSettings(model="m")`); their meanings are the
    resource's. Spelled out so that a type checker reads it (tests/pipeline/test_settings_and_warehouse.py
    checks that it has the resource's fields but the key, with its defaults)."""

    model: str = "gpt-4o-mini"
    base_url: str | None = None
    temperature: float = 0.0
    timeout_s: float = 60.0
    max_attempts: int = 5
    batch_control_attempts: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    concurrency: int = 4
    failure_budget: int = 20
    spend_cap_usd: float = 5.0
    input_usd_per_mtok: float = 0.15
    output_usd_per_mtok: float = 0.60
    batch_discount: float = 0.5
    max_labels: int = 3

    def cost(self, prompt_tokens: int, completion_tokens: int, *, batch: bool = False) -> float:
        usd = (prompt_tokens * self.input_usd_per_mtok + completion_tokens * self.output_usd_per_mtok) / 1e6
        return usd * (self.batch_discount if batch else 1.0)


# Every setting of the resource but the key (the judge is given that apart, and never logs it).
SETTING_NAMES = tuple(name for name in ChatModelResource.model_fields if name != "api_key")
