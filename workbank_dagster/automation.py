"""Jobs, the schedule and the sensors: what runs, and when.

- `benchmark_files_sensor` keeps the `benchmarks` partitions in step with the benchmark and results
  folders. It hashes every `benchmarks/<slug>.jsonl` and `results/<slug>.csv`. A new slug adds its
  partition and, in the same result, requests a run of that partition and everything downstream; a
  changed file requests the same refresh; a removed file deletes its partition (its rows leave in
  the run's `raw/benchmark_catalog` and `labeling/label_catalog` steps). The cursor holds the hashes last acted on, so nothing is
  requested twice.
- `audit_files_sensor` does the same for `audits/<slug>.csv` and the `audits` partitions.
- `weekly_refresh` rebuilds every benchmark and everything downstream, as one run.
"""


import json

import dagster as dg

from .audits.assets import audit_files
from .common import SLUG_PATTERN, file_sha256
from .partitions import audits_partitions, benchmarks_partitions, partition_requests
from .settings import PipelineSettings, Settings

# The LLM judge costs money and needs a key: it runs only when asked (job llm_labeling), never by
# `make run`, the sensor or the schedule.
LLM_ASSETS = dg.AssetSelection.keys(["labeling", "llm_labels"], ["labeling", "llm_judgements"])
# User audits have partitions of their own (`audits`), so they run in their own job (user_audits).
AUDIT_ASSETS = dg.AssetSelection.keys(["analysis", "user_audit"], ["analysis", "user_audit_catalog"])
# Runs from the UI, the sensor and the schedule default to one process, like `make run`: the model
# loads once per run and no step pays a process start-up. Run config can still pick `multiprocess`.
IN_PROCESS = {"execution": {"config": {"in_process": {}}}}
REFRESH_SELECTION = (
    dg.AssetSelection.keys(["raw", "benchmark_prompts"], ["raw", "benchmark_results"]).downstream() - LLM_ASSETS - AUDIT_ASSETS
).required_multi_asset_neighbors()
benchmark_refresh_job = dg.define_asset_job(
    "benchmark_refresh",
    config=IN_PROCESS,
    selection=REFRESH_SELECTION,
    description="One benchmark partition through prompts, results and labels, then every mart and report that depends on them.",
)
all_assets_job = dg.define_asset_job(
    "all_assets",
    config=IN_PROCESS,
    selection=dg.AssetSelection.all() - LLM_ASSETS - AUDIT_ASSETS,
    description="Everything but the LLM judge and user audits: sources, embedded labels, dbt, analysis, report.",
)
llm_labeling_job = dg.define_asset_job(
    "llm_labeling",
    config=IN_PROCESS,
    selection=(LLM_ASSETS | LLM_ASSETS.downstream()) - AUDIT_ASSETS,
    description="The LLM judge over the selected benchmark partitions (needs an API key), then validation and everything downstream.",
)


def benchmark_file_hashes(settings: Settings) -> tuple[dict[str, str], list[str]]:
    """Hash per slug (prompts file + results file if any), and the names that are not safe slugs."""
    prints: dict[str, str] = {}
    refused: list[str] = []
    if settings.benchmarks_dir.is_dir():
        for path in sorted(settings.benchmarks_dir.glob("*.jsonl")):
            if not SLUG_PATTERN.match(path.stem):
                refused.append(path.name)
                continue
            results = settings.results_dir / f"{path.stem}.csv"
            prints[path.stem] = file_sha256(path) + (":" + file_sha256(results) if results.is_file() else "")
    return prints, refused


@dg.sensor(
    job=benchmark_refresh_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds, refreshes or removes a benchmark partition when its file appears, changes or disappears.",
)
def benchmark_files_sensor(context: dg.SensorEvaluationContext, pipeline_settings: PipelineSettings) -> dg.SensorResult:
    previous: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    current, refused = benchmark_file_hashes(pipeline_settings.resolve())
    existing = context.instance.get_dynamic_partitions(benchmarks_partitions.name)
    if context.cursor:
        changed = sorted(slug for slug, digest in current.items() if previous.get(slug) != digest)
    else:
        # First tick (a new instance, or the sensor just turned on): `make run` may have built every
        # partition already, so only those never materialized are requested, not one run per file.
        built = context.instance.get_materialized_partitions(dg.AssetKey(["raw", "benchmark_prompts"]))
        changed = sorted(slug for slug in current if slug not in built)
    requests = [
        dg.RunRequest(run_key=f"{slug}:{current[slug]}", partition_key=slug, tags={"workbank/trigger": "benchmark_file"})
        for slug in changed
    ]
    for name in refused:
        context.log.warning(f"ignored {name}: not a safe benchmark slug ({SLUG_PATTERN.pattern})")
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=partition_requests(benchmarks_partitions, existing, current),
        cursor=json.dumps(current, sort_keys=True),
    )


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
    requests = [dg.RunRequest(run_key=f"{slug}:{digest}", partition_key=slug) for slug, digest in sorted(current.items()) if previous.get(slug) != digest]
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=partition_requests(audits_partitions, existing, current),
        cursor=json.dumps(current, sort_keys=True),
    )
