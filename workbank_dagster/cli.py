"""Command line: `python -m workbank_dagster.cli run` materializes every asset on every benchmark."""

from __future__ import annotations

import argparse
import os
import sys

from .settings import REPO_ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workbank", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="materialize every asset on every benchmark, as one run")
    sub.add_parser("home", help="print (and create) the Dagster home")
    args = parser.parse_args(argv)
    os.chdir(REPO_ROOT)
    from . import runner

    if args.command == "run":
        return runner.run_all()
    print(runner.dagster_home())
    return 0


if __name__ == "__main__":
    sys.exit(main())
