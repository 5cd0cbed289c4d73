"""Benchmark prompts and per-prompt results, one partition per benchmark.

Partitioned assets use a single-run backfill policy: a backfill of every benchmark is one run and
one process, not 24. Each partition is one Parquet file per table (`partition_files.py`), written
whole and renamed into place; these steps never open the warehouse, so backfills of different
benchmarks run side by side (pool `partitions`), and dbt reads the files as external sources. A bad
file is rejected on its own: its partition keeps its previous file (if any), the error (file, line,
column) is logged and recorded beside it (`<table>_file_errors/<benchmark>.parquet`), and the step
goes on, so every other benchmark refreshes through the marts and the report; the run then fails
at its end, naming the file (sources/catalog.py, report/benchmark_files_check).
"""

from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pandas as pd

from ..code_version import versioned_asset
from ..common import partition_step, table_metadata
from ..fingerprint import RECOMPUTED_METADATA, content_version
from ..partition_files import PartitionFiles
from ..partitions import benchmarks_partitions
from ..settings import PipelineSettings
from . import load_memo
from .assets import RAW_SCHEMA
from .benchmark_set import Benchmark, BenchmarkFile, benchmark_set
from .benchmarks import check_slug, read_benchmark_prompts, read_benchmark_results
from .catalog import record_file_errors
from .instructions import instruction_rows, read_instructions
from .validate import SourceFormatError

PROMPTS_TABLE = "benchmark_prompts"
RESULTS_TABLE = "benchmark_results"
INSTRUCTIONS_TABLE = "benchmark_instructions"


def _write_partitions(context, files: PartitionFiles, table, file_of, parse, counted: str):
    """Parse and write each of the run's partitions; a rejected one keeps its file and its error is recorded.
    Returns the rows written per partition, the rows, and the step's metadata (rows per partition as
    `counted`, and the errors).

    `file_of(key)` is the partition's file (benchmark_set.BenchmarkFile), or None when it has none.
    A partition whose file hash and parser are those its last materialization recorded keeps its
    file and is read back rather than parsed (`load_memo`): a pinned file's hash is known without
    fetching it, so an unchanged fetched benchmark is not downloaded again. Each partition parsed
    appends its load to the partition's load log."""
    keys = list(context.partition_keys)
    written: dict[str, int] = {}
    errors: dict[str, str] = {}
    frames = []
    parsed_keys: list[str] = []
    recorded = load_memo.recorded_loads(files, table, keys)
    loads: dict[str, dict] = {}
    for key in keys:
        try:
            check_slug(key, f"partition {key!r}")
            file = file_of(key)
            digest = file.fingerprint if file is not None else "missing"
            located = _Located(file)
            frame, parsed, loads[key] = load_memo.reuse_or_parse(
                digest, recorded.get(key),
                read_back=lambda key=key: pd.read_parquet(files.path(table, key)) if files.path(table, key).is_file() else None,
                parse=lambda key=key, located=located, digest=digest: parse(key, located.path(), digest),
                write=lambda frame, key=key: files.write(table, key, frame),
                # One name whichever copy was read (benchmarks/<slug>.jsonl, results/<slug>.csv).
                source_file=file.name if file is not None else None,
                source_bytes=lambda located=located, key=key: located.size(recorded.get(key)),
            )
            if located.note:
                context.log.warning(located.note)
            if parsed:
                parsed_keys.append(key)
        except SourceFormatError as exc:
            errors[key] = str(exc)  # its previous rows stay, and so does the logged load they came from
            context.log.error(str(exc))
            continue
        written[key] = len(frame)
        frames.append(frame)
    if len(parsed_keys) < len(keys):
        context.log.info(f"raw.{table}: {len(keys) - len(parsed_keys)} of {len(keys)} partition(s) unchanged, kept without parsing")
    record_file_errors(files, table, keys, errors)
    load_memo.append_loads(files, table, {key: loads[key] for key in parsed_keys}, context.run_id)
    if errors:
        context.log.error(
            f"raw.{table}: {len(errors)} benchmark file(s) rejected, their previous rows kept; {len(written)} other partition(s) written"
        )
    combined = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return written, combined, {
        **table_metadata(combined),
        counted: dg.MetadataValue.json(written),
        "errors": dg.MetadataValue.json(errors),
        RECOMPUTED_METADATA: dg.MetadataValue.json(parsed_keys),
    }


def _load_benchmark_files(context, pipeline_settings: PipelineSettings, table: str, file_of: Callable[[Benchmark], BenchmarkFile | None], parse, counted: str):
    """`_write_partitions` over the run's benchmark set, each partition's file `file_of(its benchmark)`."""
    settings = pipeline_settings.resolve()
    found = benchmark_set(settings)
    return _write_partitions(context, settings.partition_files, table, lambda key: file_of(found[key]) if key in found else None, parse, counted)


class _Located:
    """A partition's file, fetched at most once and only when it is parsed."""

    def __init__(self, file: BenchmarkFile | None) -> None:
        self.file, self.note, self._path, self._done = file, "", None, False

    def path(self) -> Path | None:
        if not self._done:
            self._path = self.file.path() if self.file is not None else None
            self._done = True
            if self._path is None and self.file is not None:
                self.note = self.file.missing
        return self._path

    def size(self, recorded: dict | None) -> int | None:
        """The file's size: of the copy read, or as recorded when its rows were kept unparsed."""
        if self._path is not None:
            return self._path.stat().st_size
        return recorded.get("bytes") if recorded and not self._done else None


PARTITIONED_SOURCE = {
    "partitions_def": benchmarks_partitions,
    "backfill_policy": dg.BackfillPolicy.single_run(),
    **partition_step("sources", "team:data-engineering"),
}


def parse_prompts(key: str, path: Path | None, digest: str) -> pd.DataFrame:
    """A benchmark's prompts file, with its hash on every row; a missing file is an error of its partition."""
    if path is None or not path.is_file():
        raise SourceFormatError(path or f"benchmarks/{key}.jsonl", "benchmark file not found (was it removed? delete the partition too)")
    frame = read_benchmark_prompts(path)
    frame["source_sha256"] = digest
    return frame


def parse_results(key: str, path: Path | None, digest: str) -> pd.DataFrame:
    """A benchmark's results file; none published (or none at hand) is no rows, not an error."""
    if path is not None and path.is_file():
        return read_benchmark_results(path, key)
    columns = {"benchmark": "string", "model": "string", "prompt_id": "string", "score": "Float64", "extra": "string"}
    return pd.DataFrame({name: pd.array([], dtype=dtype) for name, dtype in columns.items()})


def observed_benchmark_files(table: str, file_of: Callable[[Benchmark], BenchmarkFile | None], what: str):
    """The observable source `files/<table>`: one data version per benchmark partition, the SHA-256 of
    the benchmark's file (a pinned file not fetched yet: its pinned SHA-256; none: "missing"), all
    of them from one observation (`DataVersionsByPartition`): the run's partitions, or every one
    when the run has none. `raw/<table>` depends on it, so a changed file marks that benchmark's
    partition of `raw/<table>` stale in Dagster, and no other. `benchmark_set` lists and hashes every
    benchmark file each time, as each loading step does (not measured at a thousand benchmarks)."""

    @dg.observable_source_asset(
        key=["files", table],
        partitions_def=benchmarks_partitions,
        group_name="sources",
        description=f"Each benchmark's {what}; a partition's data version is its file's SHA-256, so a changed file marks "
        f"that partition of raw.{table} stale.",
        metadata={"files": what},
    )
    def _observe(context: dg.OpExecutionContext, pipeline_settings: PipelineSettings) -> dg.DataVersionsByPartition:
        found = benchmark_set(pipeline_settings.resolve())
        versions = {}
        # A run of some partitions observes their files (a backfill, the sensor's runs); an observation alone, every one.
        partitioned_run = context.has_partition_key or context.has_partition_key_range
        for key in context.partition_keys if partitioned_run else context.instance.get_dynamic_partitions(benchmarks_partitions.name):
            file = file_of(found[key]) if key in found else None
            versions[key] = dg.DataVersion(file.fingerprint if file is not None else "missing")
        return dg.DataVersionsByPartition(versions)

    return _observe


benchmark_prompt_files = observed_benchmark_files(PROMPTS_TABLE, lambda benchmark: benchmark.prompts, "prompts file (benchmarks/<slug>.jsonl)")
benchmark_result_files = observed_benchmark_files(RESULTS_TABLE, lambda benchmark: benchmark.results, "per-prompt results file (results/<slug>.csv)")
# The observations of the per-benchmark files, steps of the jobs that load them (automation.py).
BENCHMARK_FILE_KEYS = (dg.AssetKey(["files", PROMPTS_TABLE]), dg.AssetKey(["files", RESULTS_TABLE]))


def partitioned_source(table: str, description: str, deps=()):
    """The decorator of a per-benchmark source table `raw.<table>` (its files: `<partitions_dir>/<table>/`)."""
    return versioned_asset(key=[RAW_SCHEMA, table], **PARTITIONED_SOURCE, deps=list(deps), description=description)


@partitioned_source(PROMPTS_TABLE, "Prompts of one benchmark (benchmarks/<slug>.jsonl): benchmark, prompt_id, prompt, prompt_hash. "
                    "Every malformed line is rejected with its file and line.", deps=[BENCHMARK_FILE_KEYS[0]])
def benchmark_prompts(context: dg.AssetExecutionContext, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    written, combined, metadata = _load_benchmark_files(context, pipeline_settings, PROMPTS_TABLE, lambda b: b.prompts, parse_prompts, "prompts_by_benchmark")
    if len(combined):
        metadata["duplicate_texts_within_benchmarks"] = int(combined.duplicated(["benchmark", "prompt_hash"]).sum())
    if len(written) == 1 and len(combined):
        metadata["sha256"] = combined["source_sha256"].iloc[0]
        return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(combined["source_sha256"].iloc[0]))
    return dg.MaterializeResult(metadata=metadata)


@partitioned_source(RESULTS_TABLE, "Per-prompt model results (results/<slug>.csv): benchmark, model, prompt_id, score in [0, 1], "
                    "extra columns as JSON. A benchmark without published results has no rows.", deps=[BENCHMARK_FILE_KEYS[1]])
def benchmark_results(context: dg.AssetExecutionContext, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    _, combined, metadata = _load_benchmark_files(context, pipeline_settings, RESULTS_TABLE, lambda b: b.results, parse_results, "rows_by_benchmark")
    if len(combined):
        metadata["n_models"] = int(combined["model"].nunique())
    if len(context.partition_keys) == 1:  # a run of several partitions has no one version (Dagster's is per partition)
        return dg.MaterializeResult(metadata=metadata, data_version=content_version(combined))
    return dg.MaterializeResult(metadata=metadata)


@partitioned_source(INSTRUCTIONS_TABLE, "The instruction text a benchmark's harness wraps around every prompt (or its README's "
                    "statement of the task), verbatim, with its source (repository, commit, path or package, version) and licence: "
                    "one row, or none for a benchmark without one (sources/instructions.py; setting benchmark_instructions). "
                    "The judges read it as evidence of the work the benchmark asks for.")
def benchmark_instructions(context: dg.AssetExecutionContext, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()
    keys = list(context.partition_keys)
    for key in keys:
        check_slug(key, f"partition {key!r}")
    found = read_instructions(settings.benchmark_instructions)
    frame = instruction_rows(found, keys)
    files = settings.partition_files
    for key in keys:
        files.write(INSTRUCTIONS_TABLE, key, frame[frame["benchmark"] == key])
    digests = dict(zip(frame["benchmark"], frame["instruction_sha256"]))
    metadata = {
        **table_metadata(frame),
        "file": str(settings.benchmark_instructions),
        "instruction_sha256": dg.MetadataValue.json({key: digests.get(key) for key in keys}),
        "without_instruction": dg.MetadataValue.json([key for key in keys if key not in digests]),
    }
    if len(keys) == 1:
        return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(digests.get(keys[0], "none")))
    return dg.MaterializeResult(metadata=metadata)
