"""Warm runs of this checkout and of another commit, alternated, on the same machine at the same time.

`make bench` measures one commit; comparing it with figures measured on another day compares the
machine's days as much as the code (this 2-core machine drifts by 10-20% over a day). This script
checks the other commit out in a temporary worktree, brings both to the warm state from the same
finished run (one untimed run each), then alternates their warm runs and writes the medians to
bench/warm_comparison.json, with each step's median seconds (from the run's own events) and the
steps whose medians differ most, so that a difference in the total names where it comes from.

    .venv/bin/python bench/compare_warm.py REV RUN_DIR CACHE_DIR [--runs 3]

RUN_DIR holds a finished run (RUN_DIR/data, RUN_DIR/dagster_home), CACHE_DIR its embedding cache,
as for `bench/run.py --only warm --warm-from`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from run import PIPELINE, commit, machine, run_env, timed  # noqa: E402

sys.path.insert(0, str(REPO))
from workbank_dagster.settings import default_source_dir  # noqa: E402

# Run in a side's environment (its DAGSTER_HOME) with SINCE, an epoch time: the seconds of each step
# of the runs created since (`cli run` launches the pipeline's run, then the audits' when there are
# audit files), from STEP_START to STEP_SUCCESS, and of the runs, from RUN_START to RUN_SUCCESS.
STEP_SECONDS = """
import json, dagster as dg
instance = dg.DagsterInstance.get()
seconds = {RUN: 0.0}
for record in instance.get_run_records(limit=20):
    if record.create_timestamp.timestamp() < SINCE:
        continue
    began = {}
    for event in instance.all_logs(record.dagster_run.run_id):
        kind = event.dagster_event.event_type if event.dagster_event else None
        key = event.step_key or RUN
        if kind in (dg.DagsterEventType.STEP_START, dg.DagsterEventType.RUN_START):
            began[key] = event.timestamp
        elif kind in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.RUN_SUCCESS) and key in began:
            seconds[key] = round(seconds.get(key, 0.0) + event.timestamp - began[key], 2)
print(json.dumps(seconds))
"""
RUN = "(the runs, start to end)"
OUTSIDE = "(the process outside the runs)"


def step_seconds(env: dict, cwd: Path, since: float, elapsed: float) -> dict[str, float]:
    """Each step's seconds in the runs `env`'s instance created after `since` (epoch seconds), the
    runs' own, and the process's outside them."""
    script = f"RUN = {RUN!r}\nSINCE = {since!r}\n" + STEP_SECONDS
    out = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    seconds = json.loads(out.stdout.strip().splitlines()[-1])
    seconds[OUTSIDE] = round(elapsed - seconds[RUN], 2)
    return seconds


def step_differences(steps: dict[str, dict[str, list[float]]], this: str, other: str, top: int = 6) -> list[dict]:
    """The steps whose median seconds differ most between the two sides, largest first (a step one
    side lacks counts as 0 s there)."""
    names = set(steps[this]) | set(steps[other])
    medians = {
        name: {side: (statistics.median(steps[side][name]) if steps[side].get(name) else 0.0) for side in (this, other)}
        for name in names
        if name != RUN
    }
    ranked = sorted(medians, key=lambda name: (-abs(medians[name][this] - medians[name][other]), name))
    return [
        {"step": name, this: round(medians[name][this], 2), other: round(medians[name][other], 2), "difference_s": round(medians[name][this] - medians[name][other], 2)}
        for name in ranked[:top]
    ]


def prepare(root: Path, run_dir: Path, cache_dir: Path) -> None:
    shutil.copytree(run_dir / "data", root / "data")
    shutil.copytree(run_dir / "dagster_home", root / "dagster_home")
    shutil.rmtree(root / "data" / "cache", ignore_errors=True)
    shutil.copytree(cache_dir, root / "data" / "cache")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("cache_dir", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "warm_comparison.json")
    args = parser.parse_args()
    source = default_source_dir()
    with tempfile.TemporaryDirectory(prefix="compare-warm-") as scratch:
        scratch = Path(scratch)
        other = scratch / "checkout"
        subprocess.run(["git", "worktree", "add", "--detach", str(other), args.rev], cwd=REPO, check=True, capture_output=True)
        try:
            sides = {"this": REPO, args.rev: other}
            envs = {}
            for name, checkout in sides.items():
                root = scratch / ("run-" + name.replace("/", "_"))
                prepare(root, args.run_dir, args.cache_dir)
                envs[name] = {**run_env(root, source), "PYTHONPATH": str(checkout)}
                completed = subprocess.run(PIPELINE, cwd=checkout, env=envs[name], capture_output=True, text=True)
                if completed.returncode != 0:  # untimed: brings the copied run to this code's warm state
                    raise RuntimeError(f"{name}: the untimed run failed\n{completed.stderr[-3000:]}")
            seconds: dict[str, list[float]] = {name: [] for name in sides}
            steps: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
            for _ in range(args.runs):
                for name, checkout in sides.items():
                    since = time.time()
                    elapsed, _, _ = timed(PIPELINE, envs[name], cwd=checkout)
                    seconds[name].append(round(elapsed, 1))
                    for step, value in step_seconds(envs[name], checkout, since, elapsed).items():
                        steps[name].setdefault(step, []).append(value)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(other)], cwd=REPO, capture_output=True)
    result = {
        "what": "warm run (`python -m workbank_dagster.cli run` with nothing changed), alternated between two commits",
        "this": commit(),
        "other": args.rev,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "runs": seconds,
        "median_s": {name: statistics.median(values) for name, values in seconds.items()},
        "step_median_s": {name: {step: statistics.median(values) for step, values in sorted(by_step.items())} for name, by_step in steps.items()},
        "largest_step_differences": step_differences(steps, "this", args.rev),
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["median_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
