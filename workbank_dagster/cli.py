"""Command line: `python -m workbank_dagster.cli run` materializes every asset on every benchmark."""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from .settings import REPO_ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workbank", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="materialize every asset on every benchmark, as one run")
    sub.add_parser("home", help="print (and create) the Dagster home")
    estimate = sub.add_parser("estimate-llm", help="dry run of the LLM judge: estimated tokens and cost of labeling, nothing sent")
    estimate.add_argument("--batch", action="store_true", help="price with the Batch API discount")
    estimate.add_argument("benchmarks", nargs="*", help="benchmark slugs (default: all in the warehouse)")
    args = parser.parse_args(argv)
    os.chdir(REPO_ROOT)
    warnings.filterwarnings("ignore", message=".*is currently in beta.*")
    from . import runner

    if args.command == "run":
        return runner.run_all()
    if args.command == "estimate-llm":
        import json

        print(json.dumps(runner.estimate_llm(batch=args.batch, benchmarks=args.benchmarks or None), indent=2))
        return 0
    print(runner.dagster_home())
    return 0


if __name__ == "__main__":
    sys.exit(main())
