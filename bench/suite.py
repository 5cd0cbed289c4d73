"""How long the tests take, as CI runs them; the figures go to bench/results.json (`suite_*`).

    python bench/suite.py [--not-e2e] [--output bench/results.json]

- suite_ci_s       `bash .ci/run` (install, lint and every test) on a clean clone of HEAD, with the
                   shared folder beside it as CI has it (a link to this checkout's ../shared)
- suite_not_e2e_s  with --not-e2e: then `make test PYTEST_ARGS='-m "not e2e"'` in the same clone
                   (the environment already installed)

One run of each (each takes many minutes); the 25 slowest tests of the CI run are kept beside them.
The clone lives in a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import REPO, machine, timed  # noqa: E402  (bench/run.py: wall time of one child process, output kept, failure raised)

DURATION = re.compile(r"^\s*([0-9.]+)s (call|setup|teardown)\s+(\S+)")


def slowest(output: str) -> list[dict]:
    return [{"seconds": float(m[1]), "when": m[2], "test": m[3]} for m in map(DURATION.match, output.splitlines()) if m]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--not-e2e", action="store_true", help="also time the tests without the full-data run")
    parser.add_argument("--output", default=str(REPO / "bench" / "results.json"))
    parser.add_argument("--log", default=str(Path(tempfile.gettempdir()) / "workbank-suite.log"), help="where CI's whole output is kept")
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "WORKBANK_"))}
    env["CI"] = "true"
    figures: dict = {
        "suite": {"commit": head, "date": time.strftime("%Y-%m-%d %H:%M"), "command": " ".join(["python", "bench/suite.py", *sys.argv[1:]]), "machine": machine()}
    }
    with tempfile.TemporaryDirectory(prefix="workbank-suite-") as tmp:
        clone = Path(tmp) / "main"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        os.symlink((REPO.parent / "shared").resolve(), Path(tmp) / "shared")
        try:
            seconds, _, completed = timed(["bash", ".ci/run"], env, cwd=clone, log=Path(args.log))
        finally:  # what CI printed, kept whether it passed or not (the clone is deleted)
            for name in ("test-artifacts",):
                if (clone / name).is_dir():
                    shutil.copytree(clone / name, Path(args.log).with_suffix("") / name, dirs_exist_ok=True)
        figures["suite_ci_s"] = round(seconds, 1)
        figures["suite"]["slowest"] = slowest(completed.stdout + completed.stderr)[:25]
        if args.not_e2e:
            seconds, _, _ = timed(["make", "test", 'PYTEST_ARGS=-m "not e2e"'], env, cwd=clone)
            figures["suite_not_e2e_s"] = round(seconds, 1)
            # Its own stamp: a later run without --not-e2e keeps this figure but not its commit.
            figures["suite_not_e2e_measured"] = {"commit": head, "date": figures["suite"]["date"]}
    output_path = Path(args.output)
    results = json.loads(output_path.read_text()) if output_path.exists() else {}
    results.update(figures)
    output_path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
