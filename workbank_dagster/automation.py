"""Jobs, the schedule and the sensors: what runs, and when.

Two jobs split the pipeline where its storage splits (#18):

- `benchmark_partitions`: a benchmark's prompts, results and embedded labels, partitioned by
  benchmark. Its steps write per-benchmark files and never the warehouse (pool `partitions`, which
  allows the instance setting `partition_workers` at once), so runs of different benchmarks, or two
  backfills, go side by side.
- `warehouse`: everything those feed and that is not partitioned (the catalogs, judge validation,
  dbt, analysis, the report), in pool `warehouse` (one at a time: DuckDB has one writer).

`make run` still runs both, and the O*NET sources, as one run (`all_assets`).

- `benchmark_files_sensor` keeps the `benchmarks` partitions in step with the benchmark files
  (sources/benchmark_set.py: the catalog's, or a source folder's, and your own folder's). It hashes
  every prompts and results file (a pinned file not fetched yet by its pinned hash). A new slug adds its
  partition and, in the same result, requests a `benchmark_partitions` run of it; a changed file
  requests the same; a removed file deletes its partition and requests a `warehouse` run (its files
  leave in the run's `raw/benchmark_catalog` and `labeling/label_catalog` steps). The cursor holds
  the hashes last acted on, so nothing is requested twice.
- `warehouse_after_partitions` starts the `warehouse` job once the partitions have changed: when a
  per-benchmark asset was materialized after the warehouse's catalogs last were, and no
  `benchmark_partitions` run is still queued or running (two backfills at once give one warehouse
  run after both, not one per partition).
- `audit_files_sensor` does the same for `audits/<slug>.csv` and the `audits` partitions.
- A file either sensor lists whose name is not a safe slug (sources/benchmarks.slug_files, the one
  listing `make run` uses too) fails the tick with that error, naming the file and the rule: the
  daemon records a failed tick and goes on, the UI shows the error, and the cursor stays where it
  was, so once the file is renamed (or moved away) the next tick acts on everything that changed.
- `weekly_refresh` rebuilds every benchmark and everything downstream, as one run.
"""


import json

import dagster as dg

from .audits.assets import AUDIT_FILES, audit_files
from .common import text_sha256
from .partitions import audits_partitions, benchmarks_partitions, partition_requests
from .settings import PipelineSettings, Settings
from .sources.assets import file_assets
from .sources.benchmark_assets import BENCHMARK_FILE_KEYS
from .sources.benchmark_set import benchmark_set
from .sources.instructions import read_instructions
from .sources.validate import SourceFormatError
from .staleness import DATA_VERSION_TAG

# The LLM judge costs money and needs a key: it runs only when asked (job llm_labeling), never by
# `make run`, the sensor or the schedule.
LLM_ASSETS = dg.AssetSelection.keys(["labeling", "llm_labels"], ["labeling", "llm_judgements"])
# User audits have partitions of their own (`audits`), so they run in their own job (user_audits).
AUDIT_ASSETS = dg.AssetSelection.keys(["analysis", "user_audit"], ["analysis", "user_audit_catalog"])
# Runs from the UI, the sensor and the schedule default to one process, like `make run`: the model
# loads once per run and no step pays a process start-up. Run config can still pick `multiprocess`.
IN_PROCESS = {"execution": {"config": {"in_process": {}}}}
# The per-benchmark assets (the LLM judge's are partitioned too, but run only in llm_labeling).
PARTITION_KEYS = (
    ["raw", "benchmark_prompts"],
    ["raw", "benchmark_results"],
    ["raw", "benchmark_instructions"],
    ["labeling", "embedded_labels"],
    ["labeling", "embedded_judgements"],
)
PARTITION_ASSETS = dg.AssetSelection.keys(*PARTITION_KEYS)
# The warehouse's steps that come first after the partitions: their last materialization marks the
# partitions as built into the warehouse.
CATALOG_KEYS = (dg.AssetKey(["raw", "benchmark_catalog"]), dg.AssetKey(["labeling", "label_catalog"]))
benchmark_partitions_job = dg.define_asset_job(
    "benchmark_partitions",
    config=IN_PROCESS,
    # The benchmark files observed first, so each partition loads against the version Dagster saw.
    selection=PARTITION_ASSETS | dg.AssetSelection.keys(*BENCHMARK_FILE_KEYS),
    partitions_def=benchmarks_partitions,
    description="The selected benchmarks' prompts, results and embedded labels, written as per-benchmark files (pool "
    "`partitions`: several at once, never the warehouse). The sensor warehouse_after_partitions then starts `warehouse`.",
)
warehouse_job = dg.define_asset_job(
    "warehouse",
    config=IN_PROCESS,
    selection=PARTITION_ASSETS.downstream() - PARTITION_ASSETS - LLM_ASSETS - AUDIT_ASSETS,
    description="Everything the benchmark partitions feed and that is not partitioned: the catalogs (which prune removed "
    "benchmarks' files), judge validation, dbt, analysis, the report. Pool `warehouse`: one at a time.",
)
all_assets_job = dg.define_asset_job(
    "all_assets",
    config=IN_PROCESS,
    # The reference and benchmark files are observed (files/*, named: all() leaves observable sources
    # out) before they are loaded, so the raw tables record the file versions Dagster saw and show
    # fresh until a file changes.
    selection=(dg.AssetSelection.all() | dg.AssetSelection.assets(*file_assets) | dg.AssetSelection.keys(*BENCHMARK_FILE_KEYS)) - LLM_ASSETS - AUDIT_ASSETS,
    description="Everything but the LLM judge and user audits: the reference files observed, sources, embedded labels, dbt, analysis, report.",
)
llm_labeling_job = dg.define_asset_job(
    "llm_labeling",
    config=IN_PROCESS,
    selection=(LLM_ASSETS | LLM_ASSETS.downstream()) - AUDIT_ASSETS,
    description="The LLM judge over the selected benchmark partitions (needs an API key), then validation and everything downstream.",
)


def benchmark_file_hashes(settings: Settings) -> dict[str, str]:
    """Hash per slug (prompts file + results file if any + its instruction text if any; a pinned
    file not fetched yet counts by its pinned hash, so nothing is downloaded here). A file whose
    name is not a safe slug raises (benchmark_set). An instructions file that cannot be read adds
    nothing: the partition run that reads it fails and says why."""
    try:
        told = {slug: text_sha256(found.text) for slug, found in read_instructions(settings.benchmark_instructions).items()}
    except SourceFormatError:
        told = {}
    return {
        slug: benchmark.prompts.fingerprint
        + (":" + benchmark.results.fingerprint if benchmark.results is not None and benchmark.results.fingerprint != "missing" else "")
        + (":instruction:" + told[slug] if slug in told else "")
        for slug, benchmark in sorted(benchmark_set(settings).items())
    }


@dg.sensor(
    jobs=[benchmark_partitions_job, warehouse_job],
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds, refreshes or removes a benchmark partition when its file appears, changes or disappears.",
)
def benchmark_files_sensor(context: dg.SensorEvaluationContext, pipeline_settings: PipelineSettings) -> dg.SensorResult:
    previous: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    current = benchmark_file_hashes(pipeline_settings.resolve())
    existing = context.instance.get_dynamic_partitions(benchmarks_partitions.name)
    if context.cursor:
        changed = sorted(slug for slug, digest in current.items() if previous.get(slug) != digest)
    else:
        # First tick (a new instance, or the sensor just turned on): `make run` may have built every
        # partition already, so only those never materialized are requested, not one run per file.
        built = context.instance.get_materialized_partitions(dg.AssetKey(["raw", "benchmark_prompts"]))
        changed = sorted(slug for slug in current if slug not in built)
    requests = [
        dg.RunRequest(
            run_key=f"{slug}:{current[slug]}", job_name=benchmark_partitions_job.name, partition_key=slug, tags={"workbank/trigger": "benchmark_file"}
        )
        for slug in changed
    ]
    removed = sorted(set(existing) - set(current))
    if removed and not requests:  # nothing to build: the warehouse still has to let them go
        requests.append(
            dg.RunRequest(run_key=f"removed:{','.join(removed)}:{len(current)}", job_name=warehouse_job.name, tags={"workbank/trigger": "benchmark_removed"})
        )
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=partition_requests(benchmarks_partitions, existing, current),
        cursor=json.dumps(current, sort_keys=True),
    )


def latest_storage_id(instance: dg.DagsterInstance, key: dg.AssetKey) -> int:
    """The event-log id of the asset's latest materialization (of any partition), 0 when none."""
    records = instance.fetch_materializations(key, limit=1).records
    return records[0].storage_id if records else 0


PARTITION_RUN_STATUSES = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED]


# Every 10 s, not the other sensors' 30: a tick is a few indexed event-log lookups and a run count
# (no file is read), and the warehouse then follows the last partition run within 10 s.
@dg.sensor(
    job=warehouse_job,
    minimum_interval_seconds=10,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Starts the warehouse job when a benchmark partition was materialized after the warehouse last took them in, "
    "once no benchmark_partitions run is queued or running.",
)
def warehouse_after_partitions(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    newest = max(latest_storage_id(context.instance, dg.AssetKey(key)) for key in PARTITION_KEYS)
    taken_in = min(latest_storage_id(context.instance, key) for key in CATALOG_KEYS)
    if newest <= taken_in:
        return dg.SkipReason("the warehouse has taken in every partition materialized so far")
    running = context.instance.get_runs_count(dg.RunsFilter(job_name=benchmark_partitions_job.name, statuses=PARTITION_RUN_STATUSES))
    if running:
        return dg.SkipReason(f"waiting for {running} benchmark_partitions run(s) to end")
    # One request per state of the partitions: the run key is the newest materialization's id.
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"partitions:{newest}", tags={"workbank/trigger": "partitions_changed"})])


@dg.schedule(job=all_assets_job, cron_schedule="0 5 * * 1", execution_timezone="UTC", description="Weekly refresh of every benchmark and everything downstream, as one run.")
def weekly_refresh(context: dg.ScheduleEvaluationContext):
    keys = context.instance.get_dynamic_partitions(benchmarks_partitions.name)
    if not keys:
        return dg.SkipReason("no benchmark partitions yet (the sensor adds them)")
    return dg.RunRequest(
        run_key=None,
        tags={"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]},
    )


user_audits_job = dg.define_asset_job(
    "user_audits", selection=AUDIT_ASSETS, description="Every audit file's partition, then the audit catalog."
)


@dg.sensor(job=user_audits_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING, description="Adds and refreshes an audit partition when audits/<slug>.csv appears or changes.")
def audit_files_sensor(context: dg.SensorEvaluationContext, pipeline_settings: PipelineSettings) -> dg.SensorResult:
    previous = json.loads(context.cursor) if context.cursor else {}
    current = audit_files(pipeline_settings.resolve().audits_dir)
    existing = context.instance.get_dynamic_partitions(audits_partitions.name)
    changed = {slug: digest for slug, digest in sorted(current.items()) if previous.get(slug) != digest}
    requests = [dg.RunRequest(run_key=f"{slug}:{digest}", partition_key=slug) for slug, digest in changed.items()]
    return dg.SensorResult(
        run_requests=requests,
        # The changed files of existing partitions observed (files/audits), as `make run` observes
        # them before it asks Dagster (a new partition's file is observed by the next `make run`).
        asset_events=[
            dg.AssetObservation(AUDIT_FILES, partition=slug, tags={DATA_VERSION_TAG: digest}) for slug, digest in changed.items() if slug in existing
        ],
        dynamic_partitions_requests=partition_requests(audits_partitions, existing, current),
        cursor=json.dumps(current, sort_keys=True),
    )
