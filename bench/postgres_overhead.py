"""Warm runs on the SQLite instance and on the team instance's PostgreSQL, alternated (#18 part 6).

A Dagster instance on PostgreSQL (`make ui-team`, workbank_dagster/team_instance.py) keeps the same
events as the SQLite one under data/dagster_home, over a socket instead of a file. What that costs
a run is measured here on the warm run (`python -m workbank_dagster.cli run` with nothing changed),
where reading the instance (each cached step's recorded key, the partitions, the pool slots) is most
of the work left. The same finished run is copied twice, once per instance; the PostgreSQL copy gets
its cluster started by the project (`cli team start`) and one untimed run, which brings that new
instance to the warm state (a new instance has no materializations, so everything recomputes once);
then the two sides' warm runs alternate and the medians go to bench/postgres_overhead.json.

    .venv/bin/python bench/postgres_overhead.py RUN_DIR CACHE_DIR [--runs 3] [--port 5439]

RUN_DIR holds a finished run (RUN_DIR/data, RUN_DIR/dagster_home), CACHE_DIR its embedding cache,
as for bench/compare_warm.py. The cluster runs as an unprivileged user when this runs as root, so
the scratch folder is made searchable by others (mode 755), and the cluster is stopped at the end.
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

from compare_warm import prepare  # noqa: E402
from run import PIPELINE, commit, machine, run_env, timed  # noqa: E402

sys.path.insert(0, str(REPO))
from workbank_dagster.settings import default_source_dir  # noqa: E402

TEAM = [sys.executable, "-m", "workbank_dagster.cli", "team"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("cache_dir", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--port", type=int, default=5439, help="the cluster's port on 127.0.0.1")
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "postgres_overhead.json")
    args = parser.parse_args()
    source = default_source_dir()
    scratch = Path(tempfile.mkdtemp(prefix="postgres-overhead-", dir="/tmp"))
    scratch.chmod(0o755)  # PostgreSQL's own user must reach its cluster folder
    envs: dict[str, dict] = {}
    try:
        for name in ("sqlite", "postgres"):
            root = scratch / name
            prepare(root, args.run_dir, args.cache_dir)
            envs[name] = run_env(root, source)
        root = scratch / "postgres"
        (root / "data").chmod(0o755)
        started = subprocess.run([*TEAM, "start", "--postgres-port", str(args.port)], cwd=REPO, env=envs["postgres"], capture_output=True, text=True)
        if started.returncode != 0:
            raise RuntimeError(f"the cluster did not start\n{started.stdout}\n{started.stderr[-3000:]}")
        envs["postgres"]["DAGSTER_HOME"] = str(root / "data" / "dagster_home_team")
        for name, env in envs.items():
            completed = subprocess.run(PIPELINE, cwd=REPO, env=env, capture_output=True, text=True)
            if completed.returncode != 0:  # untimed: the warm state of this instance
                raise RuntimeError(f"{name}: the untimed run failed\n{completed.stderr[-3000:]}")
        seconds: dict[str, list[float]] = {name: [] for name in envs}
        for _ in range(args.runs):
            for name, env in envs.items():
                elapsed, _, _ = timed(PIPELINE, env)
                seconds[name].append(round(elapsed, 1))
    finally:
        if "postgres" in envs:
            subprocess.run([*TEAM, "stop", "--postgres-port", str(args.port)], cwd=REPO, env=envs["postgres"], capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    result = {
        "what": "warm run (`python -m workbank_dagster.cli run` with nothing changed) on the SQLite instance and on PostgreSQL, alternated",
        "commit": commit(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine(),
        "runs": seconds,
        "median_s": medians,
        "postgres_over_sqlite": round(medians["postgres"] / medians["sqlite"], 3),
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({"median_s": medians, "postgres_over_sqlite": result["postgres_over_sqlite"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
