"""Materialize everything as one Dagster run (`make run`, `python -m workbank_dagster.cli run`).

The run is recorded in the Dagster instance under data/dagster_home (so `make ui` shows it): the
benchmark partitions are synced with the benchmark folder first, then every asset is materialized
in one process over the whole partition range (single-run backfill policy: no per-partition
process start-up, the embedding model loaded at most once).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import warnings
from pathlib import Path

from .dagster_instance import open_instance
from .pools import PoolWatch, free_slots_of_ended_runs
from .settings import settings_at_load

# Every CLI run executes in one process: the embedding model loads once, no step pays a process start-up.
IN_PROCESS = {"execution": {"config": {"in_process": {}}}}
def sync_dynamic_partitions(instance, name: str, keys) -> tuple[list[str], list[str]]:
    """Make the dynamic partitions `name` exactly `keys`: add the new ones, delete the gone ones."""
    from .partitions import partition_changes

    added, removed = partition_changes(instance.get_dynamic_partitions(name), keys)
    if added:
        instance.add_dynamic_partitions(name, added)
    for key in removed:
        instance.delete_dynamic_partition(name, key)
    return added, removed


def sync_partitions(instance) -> tuple[list[str], list[str]]:
    """Add a partition per benchmark file and drop partitions whose file is gone; a file whose name
    is not a safe slug raises, naming it (sources/benchmarks.slug_files), before any partition changes."""
    from .automation import benchmark_file_hashes
    from .partitions import benchmarks_partitions

    return sync_dynamic_partitions(instance, benchmarks_partitions.name, benchmark_file_hashes(settings_at_load().resolve()))


def partition_range_tags(keys: list[str], trigger: str) -> dict[str, str]:
    """Tags of one run over the partitions `keys[0]`..`keys[-1]` (the single-run backfill policy)."""
    return {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1], "workbank/trigger": trigger}


def get_all_assets_job():
    from .definitions import defs

    return defs.resolve_job_def("all_assets")


def get_partitions_job():
    from .definitions import defs

    return defs.resolve_job_def("benchmark_partitions")


def get_warehouse_job():
    from .definitions import defs

    return defs.resolve_job_def("warehouse")


def get_audits_job():
    from .definitions import defs

    return defs.resolve_job_def("user_audits")


def sync_audits(instance) -> tuple[list[str], list[str]]:
    """Sync the `audits` partitions with the audits folder; a file whose name is not a safe slug
    raises, naming it (sources/benchmarks.slug_files), before any partition changes."""
    from .audits.assets import audit_files

    return sync_dynamic_partitions(instance, "audits", audit_files(settings_at_load().resolve().audits_dir))


def audits_without_a_partition(path: Path, keys: list[str]) -> list[str]:
    """The audits whose rows `analysis.user_audit` of the warehouse `path` still holds though their partition (their file) is
    gone: what the catalog deletes. Read from the warehouse, so a removal is seen even when the run
    that synced it failed before its audits' run."""
    from . import warehouse

    if not path.is_file():
        return []
    with warehouse.connect(path, read_only=True) as con:
        if not warehouse.table_exists(con, "analysis", "user_audit"):
            return []
        found = {row[0] for row in con.execute("select distinct audit from analysis.user_audit").fetchall()}
    return sorted(found - set(keys))


def run_audits(instance) -> bool:
    """Materialize the audits (sync_audits made their partitions) in one run, when Dagster calls one
    stale or missing; else, when the warehouse holds a removed audit's rows
    (`audits_without_a_partition`) or the catalog is stale or missing, the catalog alone, which
    deletes them; else nothing.

    The audit files are observed first, without a run (staleness.report_data_versions: each file's
    SHA-256, as the `files/audits` observation gives it), so an edited file makes its audit stale."""
    import dagster as dg

    from .audits.assets import AUDIT_FILES, audit_files
    from .definitions import defs
    from .staleness import not_fresh, report_data_versions

    keys = instance.get_dynamic_partitions("audits")
    settings = settings_at_load().resolve()
    report_data_versions(instance, AUDIT_FILES, {key: digest for key, digest in audit_files(settings.audits_dir).items() if key in keys})
    audits = not_fresh(instance, defs, dg.AssetKey(["analysis", "user_audit"]), keys) if keys else {}
    catalog = not_fresh(instance, defs, dg.AssetKey(["analysis", "user_audit_catalog"]))
    removed = audits_without_a_partition(settings.duckdb_path, keys)
    if not audits and not catalog and not removed:
        print(f"audits: {len(keys)} partition(s), none stale or missing per Dagster: not run")
        return True
    for key, status in sorted(audits.items()):
        print(f"audits: {key} {status}")
    # An audit with work to do: every audit runs (one run over the partition range), then the catalog.
    # None: only the catalog runs, and deletes the rows of the audits that were removed.
    result = launch(
        get_audits_job,
        instance,
        partition_range_tags(keys, "make run") if audits else {"workbank/trigger": "make run"},
        asset_selection=None if audits else [dg.AssetKey(["analysis", "user_audit_catalog"])],
    )
    if audits:
        print(f"audits: {len(keys)} partition(s), run {result.run_id} {'succeeded' if result.success else 'failed'}")
    return result.success


def launch(get_job, instance, tags: dict[str, str], run_config: dict | None = None, asset_selection=None):
    """Execute a job of the definitions as the CLI launches every run: the pool slots of ended or
    dead runs freed first, and a `PoolWatch` saying at INFO what a waiting step waits for."""
    import uuid

    import dagster as dg

    from .transform.project import ensure_manifest

    free_slots_of_ended_runs(instance)
    ensure_manifest()  # the definitions read the manifest and never parse it (project.prepared_manifest)
    launch_id = uuid.uuid4().hex[:12]
    # Load the definitions here first: reconstructable() swallows an error raised while loading
    # them and fails later with a misleading "relative import" message.
    get_job()
    with PoolWatch(launch_id, home=Path(instance.root_directory)), sigterm_kept():
        return dg.execute_job(
            dg.reconstructable(get_job),
            instance=instance,
            tags={**tags, "workbank/launch": launch_id},
            run_config=run_config or IN_PROCESS,
            asset_selection=asset_selection,
        )


@contextlib.contextmanager
def sigterm_kept():
    """SIGTERM's handler as it was before the block, whatever an in-process run left.

    Dagster's in-process execution maps SIGTERM to SIGINT's handler and leaves it so
    (dagster/_utils/interrupts.py). A shell starts a background job (`nohup make run &`) with SIGINT
    ignored, so such a process ignored SIGTERM once its first run had ended, and a `kill` did
    nothing (tests/pipeline/test_signals.py)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None:  # None: a handler set outside Python, which Python cannot put back
            signal.signal(signal.SIGTERM, before)


def print_failure(result) -> None:
    print(f"run {result.run_id} failed", file=sys.stderr)
    for event in result.all_events:
        if event.is_failure:
            print(event.message, file=sys.stderr)


def full_run_config(*, full_refresh: bool = False) -> dict:
    """`cli run`'s run config: one process; with `full_refresh`, every dbt model rebuilt from all its input."""
    return {**IN_PROCESS, **({"ops": {"dbt_models": {"config": {"full_refresh": True}}}} if full_refresh else {})}


def run_all(full_refresh: bool = False) -> int:
    import dagster as dg

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    instance = open_instance()
    added, removed = sync_partitions(instance)
    sync_audits(instance)  # both folders listed before any run: a bad file name stops `make run` here, not after it
    keys = instance.get_dynamic_partitions("benchmarks")
    if not keys:
        print("no benchmark files found", file=sys.stderr)
        return 2
    print(f"benchmarks: {len(keys)} partitions ({len(added)} added, {len(removed)} removed)")
    result = launch(get_all_assets_job, instance, partition_range_tags(keys, "make run"), full_run_config(full_refresh=full_refresh))
    settings = settings_at_load().resolve()
    if result.success and not run_audits(instance):
        return 1
    if result.success:
        print(f"run {result.run_id} succeeded; outputs in {settings.output_dir}")
        headline = settings.output_dir / "headline.json"
        if headline.exists():
            print(headline.read_text())
        report = settings.output_dir / "report" / "index.html"
        if report.exists():
            print(f"report: {report.resolve().as_uri()}")
        return 0
    print_failure(result)
    return 1


def fetch_sources() -> int:
    """`cli fetch`: every pinned file the default sources read (fetch.UPSTREAMS, then each benchmark
    file of the catalog and of your own folder), resolved as a run resolves it, one line each:
    name, SHA-256, path. A file that cannot be had is one error line; the others go on."""
    from .common import file_sha256
    from .sources.benchmark_set import benchmark_set
    from .sources.fetch import UPSTREAMS, Resolver
    from .sources.validate import SourceFormatError

    settings = settings_at_load().resolve()
    if settings.source_dir is not None:
        print(f"the source folder {settings.source_dir} is read as given (WORKBANK_SOURCE_DIR): nothing to fetch")
        return 0
    resolver = Resolver.of(settings)
    found = benchmark_set(settings)
    wanted = [(u.target, lambda u=u: resolver.path(u)) for u in UPSTREAMS]
    for benchmark in found.values():
        wanted += [(f.name, f.path) for f in (benchmark.prompts, benchmark.results) if f is not None]
    failed = 0
    for name, resolve in wanted:
        try:
            path = resolve()
        except SourceFormatError as exc:
            print(f"error: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"{name}\t{file_sha256(path) if path else 'missing'}\t{path or 'not at hand (read without it)'}")
    print(f"{len(wanted) - failed} of {len(wanted)} files at hand in {resolver.download_dir} or {resolver.local_dir or 'no local copy'}",
          file=sys.stderr)
    return 1 if failed else 0


def free_slots() -> int:
    """`cli free-slots`: what every CLI launch does first, for a bare `dagster` command."""
    freed = free_slots_of_ended_runs(open_instance())
    print(f"freed the pool slots of {freed} run(s) that ended or were killed")
    return 0


def get_llm_job():
    from .definitions import defs

    return defs.resolve_job_def("llm_labeling")


def label_llm(benchmarks: list[str] | None = None, batch: bool = False) -> int:
    """The LLM judge over benchmarks adjacent in sorted order (default: all), then everything
    downstream (job llm_labeling), as one run; `batch` submits the requests as one Batch API job."""
    import dagster as dg

    warnings.filterwarnings("ignore", category=dg.BetaWarning)
    instance = open_instance()
    sync_partitions(instance)
    keys = sorted(instance.get_dynamic_partitions("benchmarks"))
    chosen = sorted(set(benchmarks or keys))
    unknown = [key for key in chosen if key not in keys]
    if unknown or not chosen:
        print(f"no benchmark partition {', '.join(unknown) or '(none found)'}; the partitions are: {', '.join(keys)}", file=sys.stderr)
        return 2
    first, last = keys.index(chosen[0]), keys.index(chosen[-1])
    if keys[first : last + 1] != chosen:
        print("one run labels a range of benchmarks adjacent in sorted order: "
              f"{chosen[0]}..{chosen[-1]} would also label {', '.join(sorted(set(keys[first : last + 1]) - set(chosen)))}; "
              "run the command once per benchmark instead", file=sys.stderr)
        return 2
    run_config = dict(IN_PROCESS)
    if batch:
        run_config["ops"] = {"llm_judge_labels": {"config": {"mode": "batch"}}}
    print(f"LLM labeling: {len(chosen)} benchmark(s), {chosen[0]}..{chosen[-1]}{' (Batch API)' if batch else ''}")
    result = launch(get_llm_job, instance, partition_range_tags(chosen, "cli label-llm"), run_config)
    if result.success:
        print(f"run {result.run_id} succeeded")
        return 0
    print_failure(result)
    return 1


def estimate_llm(batch: bool = False, benchmarks: list[str] | None = None) -> dict:
    """Dry run of the LLM judge over the loaded prompts: tokens and cost, nothing sent.

    Needs what `make run` wrote (the prompts' and O*NET's files) but no API key.
    """
    from .labeling.chat_model import ChatModelResource
    from .labeling.judgement_cache import JudgementCache
    from .labeling.label_files import partition_instructions, partition_prompts
    from .labeling.llm_judge import LLMJudge
    from .labeling.llm_labels import llm_candidates, llm_items
    from .labeling.matching import LabelingRuntime
    from .labeling.onet_tables import OnetTables

    settings = settings_at_load().resolve()
    files = settings.partition_files
    keys = benchmarks or files.partitions("benchmark_prompts")
    runtime = LabelingRuntime()
    embeddings = runtime.embeddings(settings)
    onet = OnetTables.from_files(files)
    index = runtime.task_index(onet, embeddings)
    instructions = partition_instructions(files, keys)
    retrieved = llm_candidates(onet, index, embeddings, partition_prompts(files, keys), settings, runtime, instructions)
    judge = LLMJudge(ChatModelResource.from_env().llm_settings(), JudgementCache(settings.judgement_cache_path))
    estimate = judge.estimate(llm_items(retrieved, index, instructions), batch=batch)
    estimate["benchmarks"] = len(keys)
    estimate["not_english"] = len(retrieved.unreadable)
    return estimate
