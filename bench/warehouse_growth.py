"""The `warehouse` job as the corpus grows: a full rebuild, and one benchmark added, changed, removed.

For each size (prompts), a workspace is made from a finished run of this checkout (its data folder
and Dagster home: the O*NET tables, the task index, the instance): its per-benchmark files are
replaced by a synthetic corpus of size / 1,000 benchmarks of 1,000 prompts each
(bench/synthetic_corpus.py, drawn from that run's own files), and the instance's `benchmarks`
partitions by theirs. Then, each a separate process running the `warehouse` job (catalogs, judge
validation, dbt, analysis, report), as the sensor `warehouse_after_partitions` would start it:

- `full_s`: the full rebuild (`dbt build --full-refresh`, `cli run --full-refresh`'s), right after
  the corpus was written, so every step computes;
- `add_one_s`: a new benchmark of 1,000 prompts (its files written and its partition added, as
  its partition run and the sensor would);
- `change_one_s`: one benchmark's files written again (another draw of it);
- `remove_one_s`: the added benchmark's partition deleted (the catalogs delete its files);
- `peak_rss_mb`: the largest resident set of any of these processes (and the children they waited
  for: dbt);
- `warehouse_mb`: the warehouse file after the last of them.

A figure under a minute is the median of `--runs` (default 3) repetitions of add, change, remove
(each adds and removes another benchmark, so the size stays); a full rebuild under a minute is
repeated on fresh workspaces. Each figure keeps its runs and the load average (1, 5, 15 minutes,
as `uptime` prints it) read before each run: the machine is shared, so timings are noisy.

    .venv/bin/python bench/warehouse_growth.py --sizes 10000,100000,1000000 [--base DATA_DIR] [--runs 3]

writes `warehouse_growth` (one entry per size) and its stamp into bench/results.json, keeping every
other figure. Measured with `nice -n 0`: run it as it is, not under `nice -n 10`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from run import commit, machine, timed  # noqa: E402
from synthetic_corpus import generate, read_profile, write_benchmark  # noqa: E402

sys.path.insert(0, str(REPO))
from workbank_dagster.partition_files import FILE_HASHES, SHARED, PartitionFiles  # noqa: E402
from workbank_dagster.settings import settings_at_load  # noqa: E402
from workbank_dagster.transform.project import ensure_manifest  # noqa: E402

PER_BENCHMARK = 1000
ONE_MINUTE = 60.0
# The job's steps by what they are (their step keys): the rest of a run's wall time is the process,
# the definitions and Dagster's own events.
PHASES = {
    "dbt": ("dbt_models",),
    "analysis": ("coverage_regression", "coverage_sensitivity", "judge_ratios", "importance_regression", "model_scores", "workbank_audit",
                 "analysis__uncovered_by_telework", "analysis__coverage_history", "label_uncertainty", "ratios_by_threshold"),
    "catalogs": ("raw__benchmark_catalog", "labeling__label_catalog", "raw__source_files", "labeling__judge_validation"),
}
JOB = """
import sys, json, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, {repo!r})
import dagster as dg
from workbank_dagster.runner import get_warehouse_job
instance = dg.DagsterInstance.get()
run_config = {{"execution": {{"config": {{"in_process": {{}}}}}}}}
if {full_refresh!r}:
    run_config["ops"] = {{"dbt_models": {{"config": {{"full_refresh": True}}}}}}
result = dg.execute_job(dg.reconstructable(get_warehouse_job), instance=instance, run_config=run_config,
                        tags={{"workbank/trigger": "bench/warehouse_growth.py"}})
steps = {{}}
for event in result.all_events:
    if event.event_type_value == "STEP_SUCCESS":
        steps[event.step_key] = round(event.event_specific_data.duration_ms / 1000, 2)
print(json.dumps({{"success": result.success, "steps": steps}}))
if not result.success:
    for event in result.all_events:
        if event.is_failure:
            print(event.message, file=sys.stderr)
sys.exit(0 if result.success else 1)
"""


def job_env(root: Path, cache: Path) -> dict:
    return {
        **os.environ,
        "WORKBANK_DATA_DIR": str(root / "data"),
        "WORKBANK_CACHE_DIR": str(cache),
        "DAGSTER_HOME": str(root / "data" / "dagster_home"),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def set_partitions(home: Path, keys: list[str]) -> None:
    """The instance's `benchmarks` partitions are exactly `keys` (what the sensor keeps in step with the files)."""
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(home))
    try:
        existing = instance.get_dynamic_partitions("benchmarks")
        for key in set(existing) - set(keys):
            instance.delete_dynamic_partition("benchmarks", key)
        missing = [key for key in keys if key not in set(existing)]
        if missing:
            instance.add_dynamic_partitions("benchmarks", missing)
    finally:
        instance.dispose()


def partitions_of(home: Path) -> list[str]:
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(home))
    try:
        return list(instance.get_dynamic_partitions("benchmarks"))
    finally:
        instance.dispose()


def workspace(root: Path, base: Path, corpus: Path) -> None:
    """A copy of the finished run `base` (its data folder, Dagster home inside) whose per-benchmark
    files are the corpus's, and whose partitions are the corpus's benchmarks."""
    shutil.copytree(base, root / "data", ignore=shutil.ignore_patterns("cache"), symlinks=True)
    partitions = root / "data" / "partitions"
    for child in partitions.iterdir():
        if child.is_dir() and child.name != SHARED:
            shutil.rmtree(child)
        elif child.is_file():  # the base's kept file hashes (partition_files.FILE_HASHES): not the corpus's files
            child.unlink()
    for child in corpus.iterdir():
        shutil.copytree(child, partitions / child.name)
    set_partitions(root / "data" / "dagster_home", PartitionFiles(corpus).partitions("benchmark_prompts"))


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def warehouse_job(root: Path, cache: Path, *, full_refresh: bool = False) -> dict:
    """One `warehouse` job in its own process: wall seconds, peak RSS, each step's seconds, the load before."""
    load = load_average()
    command = ["nice", "-n", "0", sys.executable, "-c", JOB.format(repo=str(REPO), full_refresh=full_refresh)]
    seconds, peak, completed = timed(command, job_env(root, cache))
    steps = json.loads(completed.stdout.strip().splitlines()[-1])["steps"]
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak), "load_average": load, "phases": phases(steps), "steps": steps}


def phases(steps: dict[str, float]) -> dict[str, float]:
    """A run's step seconds by phase (PHASES; `report`: every report step), and what is left of the
    sum of its steps. The wall time beyond the sum is the process and Dagster's own."""
    out = {name: round(sum(steps.get(key, 0.0) for key in keys), 1) for name, keys in PHASES.items()}
    out["report"] = round(sum(value for key, value in steps.items() if key.startswith("report__")), 1)
    out["other_steps"] = round(sum(steps.values()) - sum(out.values()), 1)
    return out


def median(runs: list[dict]) -> float:
    return round(statistics.median(r["seconds"] for r in runs), 1)


def median_run(runs: list[dict]) -> dict:
    """The run whose wall time is the median (the lower middle of an even number)."""
    ordered = sorted(runs, key=lambda r: r["seconds"])
    return ordered[(len(ordered) - 1) // 2]


def measure_size(prompts: int, base: Path, cache: Path, scratch: Path, profile, runs: int, seed: int, log) -> dict:
    n_benchmarks = prompts // PER_BENCHMARK
    corpus = scratch / f"corpus-{prompts}"
    started = time.perf_counter()
    generate(corpus, profile, n_benchmarks, PER_BENCHMARK, seed=seed)
    written_s = round(time.perf_counter() - started, 1)
    log(f"{prompts:,} prompts: corpus written in {written_s} s")
    full_runs: list[dict] = []
    root = None
    for rep in range(runs):
        if root is not None:
            shutil.rmtree(root)
        root = scratch / f"ws-{prompts}-{rep}"
        workspace(root, base, corpus)
        full_runs.append(warehouse_job(root, cache, full_refresh=True))
        log(f"  full rebuild: {full_runs[-1]['seconds']} s")
        if full_runs[-1]["seconds"] >= ONE_MINUTE:
            break
    files = PartitionFiles(root / "data" / "partitions")
    home = root / "data" / "dagster_home"
    add, change, remove = [], [], []
    for rep in range(runs):
        slug = f"added-{rep:02d}"
        write_benchmark(files, profile, slug, PER_BENCHMARK, seed=seed)
        set_partitions(home, [*partitions_of(home), slug])
        add.append(warehouse_job(root, cache))
        write_benchmark(files, profile, "syn-00000", PER_BENCHMARK, seed=seed, version=rep + 2)
        change.append(warehouse_job(root, cache))
        set_partitions(home, [key for key in partitions_of(home) if key != slug])
        remove.append(warehouse_job(root, cache))
        log(f"  add {add[-1]['seconds']} s, change {change[-1]['seconds']} s, remove {remove[-1]['seconds']} s")
        if max(add[-1]["seconds"], change[-1]["seconds"], remove[-1]["seconds"]) >= ONE_MINUTE:
            break
    warehouse = root / "data" / "warehouse.duckdb"
    partition_bytes = sum(p.stat().st_size for p in (root / "data" / "partitions").rglob("*.parquet") if SHARED not in p.parts and p.name != FILE_HASHES)
    entry = {
        "prompts": prompts,
        "benchmarks": n_benchmarks,
        "full_s": median(full_runs),
        "add_one_s": median(add),
        "change_one_s": median(change),
        "remove_one_s": median(remove),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in [*full_runs, *add, *change, *remove]),
        "warehouse_mb": round(warehouse.stat().st_size / 1e6),
        "partition_files_mb": round(partition_bytes / 1e6),
        "corpus_written_s": written_s,
        # Where the median run's time went (phases); every run, with its steps and the load, under `runs`.
        "phases": {name: median_run(runs)["phases"] for name, runs in (("full", full_runs), ("add_one", add), ("change_one", change), ("remove_one", remove))},
        "runs": {"full": full_runs, "add_one": add, "change_one": change, "remove_one": remove},
    }
    shutil.rmtree(root)
    shutil.rmtree(corpus)
    return entry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="prompts, comma-separated")
    parser.add_argument("--base", type=Path, default=None, help="a finished run's data folder (default: this checkout's)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scratch", type=Path, default=None, help="where workspaces go (default: a temporary folder)")
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "results.json")
    args = parser.parse_args()
    settings = settings_at_load().resolve()
    ensure_manifest()  # the jobs' processes read it, and never parse it
    base = (args.base or settings.data_dir).resolve()
    if not (base / "warehouse.duckdb").is_file() or not (base / "dagster_home").is_dir():
        parser.error(f"{base} holds no finished run (warehouse.duckdb, dagster_home): `make run` first")
    cache = base / "cache" if (base / "cache").is_dir() else settings.cache_dir
    profile = read_profile(base / "partitions", settings.active_labeler)
    scratch = Path(tempfile.mkdtemp(prefix="warehouse-growth-", dir=args.scratch))
    stamp = {"commit": commit(), "date": time.strftime("%Y-%m-%d %H:%M"), "machine": machine(),
             "command": " ".join(["python", "bench/warehouse_growth.py", *sys.argv[1:]]), "base_run_templates": len(profile.templates)}
    entries = []
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            entries.append(measure_size(size, base, cache, scratch, profile, args.runs, args.seed, lambda m: print(m, flush=True)))
            print(json.dumps({k: v for k, v in entries[-1].items() if k != "runs"}), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results = json.loads(args.output.read_text()) if args.output.exists() else {}
    results["warehouse_growth"] = entries
    results.setdefault("measured", {})["warehouse_growth"] = stamp
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
