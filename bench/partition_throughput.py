"""Benchmark partitions labeled with 1 worker and with 2, and what the warehouse job costs after (#18 part 6).

Partition runs (job `benchmark_partitions`) never open the warehouse, so several may run at once:
pool `partitions` has `partition_workers` slots. Measured here: K benchmarks, each its own run in
its own process, all launched at once on one fresh instance whose pool has W slots, and labeled
from scratch (a fresh data folder: no labels to keep; the embedding cache is the finished run's, so
this times retrieval and selection, not the model). Wall time from the launch to the last run's
end; W = 1 and W = 2 alternated, medians of R. The event log says how many partition steps ran at
once, so a ratio near 1 cannot hide a pool that never let two run.

Then the other half of a refresh: the `warehouse` job on a copy of the finished run after one
benchmark's partition was written again (catalogs, validation, dbt, analysis, report), timed R
times. With the cold embedding rate of bench/results.json, these give the projection for 1,000
benchmarks and 10 M prompts that bench/partition_throughput.json holds and docs/scaling.md renders
(of embedding, labeling and files; the warehouse job is measured as it grows by
bench/warehouse_growth.py, not projected).

    .venv/bin/python bench/partition_throughput.py RUN_DIR CACHE_DIR [--runs 3] [--benchmarks a,b,c,d]

RUN_DIR holds a finished run of this code (RUN_DIR/data, RUN_DIR/dagster_home), CACHE_DIR its
embedding cache, as for bench/compare_warm.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from compare_warm import prepare  # noqa: E402
from run import commit, machine, private_sources, run_env  # noqa: E402

sys.path.insert(0, str(REPO))
from workbank_dagster.settings import default_source_dir  # noqa: E402
from workbank_dagster.sources.benchmarks import slug_files  # noqa: E402

DEFAULT_BENCHMARKS = ("legalbench", "tau-bench", "gdpval", "aider-polyglot")  # 162 to 225 prompts each
PARTITION_STEPS = {"raw__benchmark_prompts", "raw__benchmark_results", "embedded_judge_labels"}

ONE_JOB = """
import sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, {repo!r})
import dagster as dg
from workbank_dagster.runner import {getter}
instance = dg.DagsterInstance.get()
tags = {tags!r}
result = dg.execute_job(dg.reconstructable({getter}), instance=instance, tags=tags,
                        run_config={{"execution": {{"config": {{"in_process": {{}}}}}}}})
sys.exit(0 if result.success else 1)
"""


def job_command(getter: str, tags: dict) -> list[str]:
    return [sys.executable, "-c", ONE_JOB.format(repo=str(REPO), getter=getter, tags=tags)]


def fresh_instance(root: Path, workers: int, benchmarks: list[str]) -> None:
    """A new Dagster home with the project's dagster.yaml, `workers` slots in pool `partitions`,
    and the benchmarks' partitions."""
    import dagster as dg

    from workbank_dagster import dagster_instance

    home = root / "dagster_home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text(dagster_instance.DAGSTER_YAML)
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        dagster_instance.configure_pools(instance, workers)
        instance.add_dynamic_partitions("benchmarks", benchmarks)
    finally:
        instance.dispose()


def step_overlap(home: Path) -> tuple[int, int]:
    """(the most partition steps running at once, partition steps run) from the instance's event log."""
    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(home))
    try:
        edges = []
        for run in instance.get_runs():
            for record in instance.all_logs(run.run_id):
                event = record.dagster_event
                if event is None or event.step_key not in PARTITION_STEPS:
                    continue
                if event.event_type == dg.DagsterEventType.STEP_START:
                    edges.append((record.timestamp, 1))
                elif event.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
                    edges.append((record.timestamp, -1))
    finally:
        instance.dispose()
    running = most = 0
    for _, change in sorted(edges, key=lambda e: (e[0], e[1])):  # an end before a start at the same instant
        running += change
        most = max(most, running)
    return most, sum(1 for _, change in edges if change == 1)


def partitions_at_once(root: Path, run_dir: Path, cache_dir: Path, source: Path, workers: int, benchmarks: list[str]) -> dict:
    """Label `benchmarks` from scratch, one run each, all launched at once, `workers` slots."""
    data = root / "data"
    shutil.copytree(run_dir / "data" / "models", data / "models")
    shutil.copytree(run_dir / "data" / "partitions" / "_shared", data / "partitions" / "_shared")
    fresh_instance(root, workers, benchmarks)
    env = {**run_env(root, source), "WORKBANK_CACHE_DIR": str(cache_dir), "WORKBANK_PARTITION_WORKERS": str(workers)}
    started = time.perf_counter()
    processes = [
        subprocess.Popen(job_command("get_partitions_job", {"dagster/partition": slug}), cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for slug in benchmarks
    ]
    failed = [(slug, p.communicate()[1][-2000:]) for slug, p in zip(benchmarks, processes) if p.wait() != 0]
    elapsed = time.perf_counter() - started
    if failed:
        raise RuntimeError(f"partition runs failed: {failed}")
    most, steps = step_overlap(root / "dagster_home")
    prompts = sum(sum(1 for _ in (source / "benchmarks" / f"{slug}.jsonl").open()) for slug in benchmarks)
    return {"seconds": round(elapsed, 1), "most_steps_at_once": most, "partition_steps": steps, "prompts": prompts}


def warehouse_after_one_partition(root: Path, run_dir: Path, cache_dir: Path, slug: str) -> float:
    """The warehouse job's wall time on a copy of the finished run after one benchmark changed (its
    file one prompt shorter, in a source folder of links to the shared data) and its partition run
    wrote it again: what dbt, analysis and the report cost a refresh at today's size."""
    prepare(root, run_dir, cache_dir)
    source = private_sources(root)
    changed = source / "benchmarks" / f"{slug}.jsonl"
    lines = changed.read_text().splitlines(keepends=True)
    changed.unlink()
    changed.write_text("".join(lines[:-1]))
    env = run_env(root, source)
    completed = subprocess.run(job_command("get_partitions_job", {"dagster/partition": slug}), cwd=REPO, env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"the partition run failed\n{completed.stderr[-3000:]}")
    started = time.perf_counter()
    completed = subprocess.run(job_command("get_warehouse_job", {}), cwd=REPO, env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"the warehouse run failed\n{completed.stderr[-3000:]}")
    return round(time.perf_counter() - started, 1)


def projection(per_worker_prompts_per_s: float, ratio: float, bench: dict, file_bytes_per_prompt: float) -> dict:
    """1,000 benchmarks and 10 M prompts, linearly from what was measured here (three orders of
    magnitude past it: an order of size, not a forecast)."""
    prompts = 10_000_000
    texts_per_s = bench["embed_floor_texts"] / bench["embed_floor_s"]  # cold embedding on this machine, texts (a prompt is >= 1)
    return {
        "prompts": prompts,
        "benchmarks": 1000,
        "embedding_hours_at_least": round(prompts / texts_per_s / 3600, 1),
        "labeling_hours_1_worker": round(prompts / per_worker_prompts_per_s / 3600, 1),
        "labeling_hours_2_workers": round(prompts / (per_worker_prompts_per_s * ratio) / 3600, 1),
        "partition_files_gb": round(file_bytes_per_prompt * prompts / 1e9, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("cache_dir", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--benchmarks", default=",".join(DEFAULT_BENCHMARKS))
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "partition_throughput.json")
    args = parser.parse_args()
    benchmarks = args.benchmarks.split(",")
    source = default_source_dir()
    scratch = Path(tempfile.mkdtemp(prefix="partition-throughput-", dir="/tmp"))
    runs: dict[str, list[dict]] = {"1": [], "2": []}
    warehouse: list[float] = []
    try:
        for rep in range(args.runs):
            for workers in (1, 2):
                root = scratch / f"w{workers}-{rep}"
                runs[str(workers)].append(partitions_at_once(root, args.run_dir, args.cache_dir, source, workers, benchmarks))
                shutil.rmtree(root, ignore_errors=True)
            root = scratch / f"warehouse-{rep}"
            warehouse.append(warehouse_after_one_partition(root, args.run_dir, args.cache_dir, benchmarks[0]))
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    medians = {w: statistics.median(r["seconds"] for r in values) for w, values in runs.items()}
    prompts = runs["1"][0]["prompts"]
    ratio = medians["1"] / medians["2"]
    partitions_dir = args.run_dir / "data" / "partitions"
    run_prompts = sum(1 for path in slug_files(source / "benchmarks", ".jsonl").values() for _ in path.open())
    file_bytes = sum(p.stat().st_size for p in partitions_dir.rglob("*.parquet") if p.parent.name != "_shared")
    bench = json.loads((REPO / "bench" / "results.json").read_text())
    result = {
        "what": f"{len(benchmarks)} benchmarks ({prompts} prompts), one benchmark_partitions run each, launched at once, labeled from "
        "scratch with a warm embedding cache, pool `partitions` at 1 and at 2 slots, alternated; then the warehouse job after one "
        "benchmark's partition was written again, on the finished run",
        "commit": commit(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "benchmarks": benchmarks,
        "runs": runs,
        "median_s": medians,
        "two_over_one_throughput": round(ratio, 3),
        "prompts_per_s": {w: round(prompts / s, 2) for w, s in medians.items()},
        "warehouse_job_s": warehouse,
        "warehouse_job_median_s": statistics.median(warehouse),
        "warehouse_prompts": run_prompts,
        "partition_file_bytes_per_prompt": round(file_bytes / run_prompts, 1),
        "projection": projection(prompts / medians["1"], ratio, bench, file_bytes / run_prompts),
        "embedding_from": {"commit_of": "bench/results.json", "texts": bench["embed_floor_texts"], "seconds": bench["embed_floor_s"]},
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("median_s", "two_over_one_throughput", "warehouse_job_median_s", "projection")}, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
