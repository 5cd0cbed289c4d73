"""Warm runs of this checkout and of another commit, alternated, on the same machine at the same time.

`make bench` measures one commit; comparing it with figures measured on another day compares the
machine's days as much as the code (this 2-core machine drifts by 10-20% over a day). This script
checks the other commit out in a temporary worktree, brings both to the warm state from the same
finished run (one untimed run each), then alternates their warm runs and writes the medians to
bench/warm_comparison.json.

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
            for _ in range(args.runs):
                for name, checkout in sides.items():
                    elapsed, _, _ = timed(PIPELINE, envs[name], cwd=checkout)
                    seconds[name].append(round(elapsed, 1))
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
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["median_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
