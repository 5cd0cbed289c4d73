"""The benchmarks a run counts: one row per benchmark partition, and nothing of a benchmark that left.

Two things a partitioned asset cannot do for itself:

- **A removed benchmark file.** The sensor and `make run` delete its Dagster partition, so it gets
  no run of its own, but its files stayed and every mart kept counting it.
  `raw/benchmark_catalog` runs unpartitioned inside every run (pool `warehouse`), after the
  partitions are written, and deletes the files (partition_files.py) of every benchmark that no
  longer has a partition. Labeling prunes its own files the same way (`labeling/label_catalog`,
  labeling/catalog.py).
- **A bad benchmark file.** Its partition is rejected on its own and keeps its previous file (if
  any); the error (file, line, column) is recorded beside it (`<table>_file_errors/<benchmark>.parquet`) and lands here,
  so the other benchmarks refresh through the marts and the report, the report says which file
  failed and why, and `report/benchmark_files_check` fails the run at its end, naming the file.

Each row also says who made the benchmark and under which licence: its row of
`benchmarks/catalog.csv`, or, for a benchmark read from a folder, its `## <slug>` section of that
folder's SOURCES.md (benchmark_set.py). A benchmark with no section, or a section with no licence
line, says so instead of guessing. The report shows these through `marts.dim_benchmark`.

The dbt project reads the catalog (`stg_benchmarks__catalog`), so `dbt build` runs after it.
"""


import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import versioned_asset
from ..common import table_metadata, warehouse_step
from ..fingerprint import content_version
from ..partition_files import PartitionFiles
from ..partitions import benchmarks_partitions
from ..resources import WarehouseResource
from ..settings import PipelineSettings
from . import load_memo
from .assets import RAW_SCHEMA
from .benchmark_set import Benchmark, benchmark_set
from .registry import SOURCES

CATALOG_TABLE = "benchmark_catalog"
ERROR_COLUMNS = ["benchmark", "source_table", "error"]
PARTITIONED_SOURCES = ("benchmark_prompts", "benchmark_results")


def errors_table(source_table: str) -> str:
    """The per-benchmark files of a partitioned source's file errors (one file per rejected benchmark)."""
    return f"{source_table}_file_errors"


# Every per-benchmark table of the sources: theirs to write and to prune (a benchmark's load log
# leaves with it).
PER_BENCHMARK = (
    *PARTITIONED_SOURCES, *(errors_table(t) for t in PARTITIONED_SOURCES), *(load_memo.log_table(t) for t in PARTITIONED_SOURCES),
    "benchmark_instructions",
)


def record_file_errors(files: PartitionFiles, source_table: str, keys: list[str], errors: dict[str, str]) -> None:
    """The errors of one partitioned source's partitions `keys`: a partition that loaded clears its
    earlier error, one that failed records its message (file, line, column)."""
    for key in keys:
        if key in errors:
            frame = pd.DataFrame([(key, source_table, errors[key])], columns=ERROR_COLUMNS).astype("string")
            files.write(errors_table(source_table), key, frame)
        else:
            files.remove(errors_table(source_table), key)


def prune_removed(files: PartitionFiles, current: list[str]) -> dict[str, int]:
    """Delete the files of benchmarks not in `current` from every per-benchmark table of the sources.
    Returns files deleted per table."""
    removed = files.remove_except(PER_BENCHMARK, current)
    return {f"{RAW_SCHEMA}.{table}": n for table, n in removed.items()}


def benchmark_attribution(found: dict[str, Benchmark], slugs: list[str]) -> pd.DataFrame:
    """benchmark, full_name, licence per slug (benchmark_set.py); a slug with no file says so."""
    rows = [
        (slug, found[slug].full_name, found[slug].licence) if slug in found else (slug, slug, "no benchmark file: licence unknown")
        for slug in slugs
    ]
    return pd.DataFrame(rows, columns=["benchmark", "full_name", "licence"]).astype("string")


def catalog(files: PartitionFiles, current: list[str]) -> pd.DataFrame:
    """benchmark, n_prompts, error (NULL when its files loaded), for every current partition."""
    # Counted by DuckDB over the files together: at a million prompts (1,009 files) reading each file's
    # column into pandas and counting took 1.7 s, this 0.2 s (the same counts).
    counted = files.query("benchmark_prompts", "select benchmark, count(*) as n from {table} group by benchmark", current)
    counts = dict(zip(counted["benchmark"], counted["n"])) if counted is not None else {}
    errors: dict[str, list[str]] = {}
    for table in PARTITIONED_SOURCES:
        found = files.read(errors_table(table), current, columns=["benchmark", "error"])
        for benchmark, message in zip(found["benchmark"], found["error"]):
            errors.setdefault(benchmark, []).append(message)
    rows = [(key, int(counts.get(key, 0)), "; ".join(errors[key]) if key in errors else None) for key in sorted(current)]
    return pd.DataFrame(rows, columns=["benchmark", "n_prompts", "error"]).astype({"benchmark": "string", "n_prompts": "Int64", "error": "string"})


@versioned_asset(
    key=[RAW_SCHEMA, CATALOG_TABLE],
    deps=[
        dg.AssetKey([RAW_SCHEMA, "benchmark_prompts"]),
        dg.AssetKey([RAW_SCHEMA, "benchmark_results"]),
        dg.AssetKey([RAW_SCHEMA, "benchmark_instructions"]),
    ],
    **warehouse_step("sources", "team:data-engineering"),
    description="One row per benchmark partition (prompts, the file error if its file was rejected, full name and licence "
    "from benchmarks/catalog.csv or the folder's SOURCES.md); the files of "
    "every benchmark whose partition is gone are deleted first.",
)
def benchmark_catalog(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    current = list(context.instance.get_dynamic_partitions(benchmarks_partitions.name))
    settings = pipeline_settings.resolve()
    attribution = benchmark_attribution(benchmark_set(settings), sorted(current))
    deleted = prune_removed(settings.partition_files, current)
    with warehouse_db.connect() as con:
        table = catalog(settings.partition_files, current).merge(attribution, on="benchmark", how="left")
        warehouse.replace_table(con, RAW_SCHEMA, CATALOG_TABLE, table)
    if deleted:
        context.log.info(f"benchmarks without a partition removed: {deleted}")
    failed = table[table["error"].notna()]
    for row in failed.itertuples(index=False):
        context.log.error(f"{row.benchmark}: {row.error}")
    return dg.MaterializeResult(
        metadata={
            **table_metadata(table),
            "files_deleted": dg.MetadataValue.json(deleted),
            "files_rejected": dg.MetadataValue.json(dict(zip(failed["benchmark"], failed["error"]))),
        },
        data_version=content_version(table),
    )


FILES_TABLE = "source_files"
FILES_TYPES = {"file": "string", "bytes": "Int64", "sha256": "string", "raw_table": "string", "benchmark": "string"}


def files_read(files: PartitionFiles, current: list[str]) -> pd.DataFrame:
    """Every file the raw tables now hold rows of: path (relative to the source folder), size,
    SHA-256, the raw table, the benchmark (NULL for a whole-table source), as each source's last
    logged load recorded it (`load_memo`), for the benchmarks of `current` only; an absent optional
    file (a benchmark without results) is not one."""
    rows = []
    for source in SOURCES:
        for record in load_memo.recorded_loads(files, source.table).values():
            rows.append((record["file"], record["bytes"], record["sha256"], source.table, None))
    for table in PARTITIONED_SOURCES:
        for benchmark, record in load_memo.recorded_loads(files, table, sorted(current)).items():
            rows.append((record["file"], record["bytes"], record["sha256"], table, benchmark))
    frame = pd.DataFrame(rows, columns=list(FILES_TYPES))
    frame = frame[frame["file"].notna() & (frame["sha256"] != "missing")]
    frame = frame.sort_values(["raw_table", "benchmark"], na_position="first", kind="stable").reset_index(drop=True)
    return frame.astype(FILES_TYPES)


@versioned_asset(
    key=[RAW_SCHEMA, FILES_TABLE],
    deps=[*(dg.AssetKey([RAW_SCHEMA, s.table]) for s in SOURCES), dg.AssetKey([RAW_SCHEMA, CATALOG_TABLE])],
    **warehouse_step("sources", "team:data-engineering"),
    description="Every file the raw tables were loaded from: path, bytes and SHA-256 as each source's last load logged them "
    "(source_loads/<table>.parquet, <table>_loads/<benchmark>.parquet), for the benchmarks that still have a partition; the report's data versions.",
)
def source_files(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    files = pipeline_settings.resolve().partition_files
    table = files_read(files, list(context.instance.get_dynamic_partitions(benchmarks_partitions.name)))
    with warehouse_db.connect() as con:
        warehouse.replace_table(con, RAW_SCHEMA, FILES_TABLE, table)
    return dg.MaterializeResult(metadata=table_metadata(table), data_version=content_version(table))
