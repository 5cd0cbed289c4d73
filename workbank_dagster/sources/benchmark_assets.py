"""Benchmark prompts and per-prompt results, one partition per benchmark.

Partitioned assets use a single-run backfill policy: a backfill of every benchmark is one run and
one process, not 24. Each partition is written in its own transaction (delete its rows, insert the
new ones). A bad file is rejected on its own: its partition keeps its previous rows (if any), the
error (file, line, column) is logged and recorded in `raw._benchmark_file_errors`, and the step
goes on, so every other benchmark refreshes through the marts and the report; the run then fails
at its end, naming the file (sources/catalog.py, report/benchmark_files_check).
"""


import dagster as dg
import pandas as pd

from .. import warehouse
from ..common import file_sha256, table_metadata
from ..partitions import benchmarks_partitions
from ..resources import WarehouseResource
from ..settings import PipelineSettings
from . import load_memo
from .assets import RAW_SCHEMA
from .benchmarks import check_slug, read_benchmark_prompts, read_benchmark_results
from .catalog import record_file_errors
from .validate import SourceFormatError

PROMPTS_TABLE = "benchmark_prompts"
RESULTS_TABLE = "benchmark_results"


def _write_partitions(context, warehouse_db, table, keys, path_of, parse):
    """Parse and write each partition; a rejected one keeps its rows and its error is recorded.

    A partition whose file hash and parser are those of its recorded load keeps its rows and is
    read back rather than parsed (`load_memo`)."""
    written: dict[str, int] = {}
    errors: dict[str, str] = {}
    frames = []
    reused = 0
    for key in keys:
        try:
            check_slug(key, f"partition {key!r}")
            path = path_of(key)
            digest = file_sha256(path) if path.is_file() else "missing"
            frame, parsed = load_memo.reuse_or_parse(
                warehouse_db, RAW_SCHEMA, table, digest,
                parse=lambda key=key, path=path, digest=digest: parse(key, path, digest),
                write=lambda con, frame, key=key: warehouse.replace_rows(con, RAW_SCHEMA, table, frame, {"benchmark": key}),
                partition=key,
            )
            reused += not parsed
        except SourceFormatError as exc:
            errors[key] = str(exc)
            context.log.error(str(exc))
            continue
        written[key] = len(frame)
        frames.append(frame)
    if reused:
        context.log.info(f"raw.{table}: {reused} of {len(keys)} partition(s) unchanged, kept without parsing")
    with warehouse_db.connect() as con:
        record_file_errors(con, table, list(keys), errors)
    if errors:
        context.log.error(
            f"raw.{table}: {len(errors)} benchmark file(s) rejected, their previous rows kept; {len(written)} other partition(s) written"
        )
    combined = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return written, combined, errors


PARTITIONED_SOURCE = {
    "partitions_def": benchmarks_partitions,
    "backfill_policy": dg.BackfillPolicy.single_run(),
    "group_name": "sources",
    "kinds": {"duckdb", "python"},
    "owners": ["team:data-engineering"],
    "pool": "warehouse",
}


@dg.asset(
    key=[RAW_SCHEMA, PROMPTS_TABLE],
    **PARTITIONED_SOURCE,
    description="Prompts of one benchmark (benchmarks/<slug>.jsonl): benchmark, prompt_id, prompt, prompt_hash. "
    "Every malformed line is rejected with its file and line.",
)
def benchmark_prompts(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()

    def parse(key: str, path, digest: str) -> pd.DataFrame:
        if not path.is_file():
            raise SourceFormatError(path, "benchmark file not found (was it removed? delete the partition too)")
        frame = read_benchmark_prompts(path)
        frame["source_sha256"] = digest
        return frame

    written, combined, errors = _write_partitions(
        context, warehouse_db, PROMPTS_TABLE, context.partition_keys, lambda key: settings.benchmarks_dir / f"{key}.jsonl", parse
    )
    metadata = table_metadata(combined)
    metadata["prompts_by_benchmark"] = dg.MetadataValue.json(written)
    metadata["errors"] = dg.MetadataValue.json(errors)
    if len(combined):
        metadata["duplicate_texts_within_benchmarks"] = int(combined.duplicated(["benchmark", "prompt_hash"]).sum())
    if len(written) == 1 and len(combined):
        metadata["sha256"] = combined["source_sha256"].iloc[0]
        return dg.MaterializeResult(metadata=metadata, data_version=dg.DataVersion(combined["source_sha256"].iloc[0]))
    return dg.MaterializeResult(metadata=metadata)


@dg.asset(
    key=[RAW_SCHEMA, RESULTS_TABLE],
    **PARTITIONED_SOURCE,
    description="Per-prompt model results (results/<slug>.csv): benchmark, model, prompt_id, score in [0, 1], "
    "extra columns as JSON. A benchmark without published results has no rows.",
)
def benchmark_results(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()

    def parse(key: str, path, digest: str) -> pd.DataFrame:
        if not path.is_file():
            return pd.DataFrame(
                {"benchmark": pd.array([], dtype="string"), "model": pd.array([], dtype="string"), "prompt_id": pd.array([], dtype="string"),
                 "score": pd.array([], dtype="Float64"), "extra": pd.array([], dtype="string")}
            )
        return read_benchmark_results(path, key)

    written, combined, errors = _write_partitions(
        context, warehouse_db, RESULTS_TABLE, context.partition_keys, lambda key: settings.results_dir / f"{key}.csv", parse
    )
    metadata = table_metadata(combined)
    metadata["rows_by_benchmark"] = dg.MetadataValue.json(written)
    metadata["errors"] = dg.MetadataValue.json(errors)
    if len(combined):
        metadata["n_models"] = int(combined["model"].nunique())
    return dg.MaterializeResult(metadata=metadata)
