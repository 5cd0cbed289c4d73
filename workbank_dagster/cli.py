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
    run = sub.add_parser("run", help="materialize every asset on every benchmark, as one run")
    run.add_argument(
        "--full-refresh", action="store_true",
        help="rebuild every dbt model from all the partition files (dbt build --full-refresh), not only the benchmarks whose files changed",
    )
    sub.add_parser("home", help="print (and create) the Dagster home, its pools given their slots")
    sub.add_parser("warehouse", help="print the warehouse file the settings name (paths.duckdb_path, resolved)")
    sub.add_parser("partitions", help="print the folder of the per-benchmark Parquet files (paths.partitions_dir, resolved)")
    sub.add_parser("dbt-profiles", help="write the dbt profile of the settings' warehouse and partition files and print its folder "
                   "(for a dbt command of your own: --profiles-dir)")
    estimate = sub.add_parser("estimate-llm", help="dry run of the LLM judge: estimated tokens and cost of labeling, nothing sent")
    estimate.add_argument("--batch", action="store_true", help="price with the Batch API discount")
    estimate.add_argument("benchmarks", nargs="*", help="benchmark slugs (default: all in the warehouse)")
    sub.add_parser("prepare", help="parse the dbt project into its manifest if it changed (before a bare `dagster` command; run, label-llm and dagster dev do it)")
    sub.add_parser("free-slots", help="give back the pool slots of runs that ended or were killed (before a bare `dagster` command)")
    label = sub.add_parser("label-llm", help="the LLM judge over benchmarks (default: all) and everything downstream (job llm_labeling)")
    label.add_argument("--batch", action="store_true", help="submit the requests as one Batch API job")
    label.add_argument("benchmarks", nargs="*", help="benchmark slugs adjacent in sorted order (default: all)")
    team = sub.add_parser("team", help="the team instance on PostgreSQL (team_instance.py): start or stop its cluster, or run the UI over it")
    team.add_argument("action", choices=["start", "stop", "ui"], help="ui: cluster, webserver and daemon, all stopped on Ctrl-C")
    team.add_argument("--port", type=int, default=3000, help="the webserver's port (ui)")
    team.add_argument("--postgres-port", type=int, default=5433, help="the cluster's port on 127.0.0.1")
    sub.add_parser("fetch", help="resolve every pinned source file (reference files and benchmark recipes) into the download "
                   "folder or a local copy, and print each one's name, SHA-256 and path")
    sub.add_parser("migrate", help="bring a warehouse made by an older checkout up to this one, once (migrate.py): drops the tables "
                   "the pipeline retired and moves the coverage history from the Dagster instance into the warehouse")
    notice = sub.add_parser("notice", help="write benchmarks/NOTICE.md from benchmarks/catalog.csv")
    notice.add_argument("--check", action="store_true", help="only say whether NOTICE.md matches the catalog (exit 1 if not)")
    args = parser.parse_args(argv)
    os.chdir(REPO_ROOT)
    warnings.filterwarnings("ignore", message=".*is currently in beta.*")
    log_to_stderr()
    from . import dagster_instance
    from .sources.validate import SourceFormatError

    try:
        return command(args)
    except (dagster_instance.InstanceUnreachable, SourceFormatError) as exc:  # a bad input file outside a run: its name, line, rule
        print(f"error: {exc}", file=sys.stderr)
        return 2


def command(args: argparse.Namespace) -> int:
    from . import dagster_instance, runner

    if args.command == "run":
        return runner.run_all(full_refresh=args.full_refresh)
    if args.command == "warehouse":
        from .settings import settings_at_load

        print(settings_at_load().resolve().duckdb_path)
        return 0
    if args.command == "partitions":
        from .settings import settings_at_load

        print(settings_at_load().resolve().partitions_dir)
        return 0
    if args.command == "dbt-profiles":
        from .settings import settings_at_load
        from .transform.project import profiles_dir_for

        print(profiles_dir_for(settings_at_load().resolve()))
        return 0
    if args.command == "prepare":
        from .transform.project import ensure_manifest

        print(ensure_manifest())
        return 0
    if args.command == "free-slots":
        return runner.free_slots()
    if args.command == "migrate":
        from .migrate import migrate
        from .settings import settings_at_load

        with dagster_instance.open_instance() as instance:
            changes = migrate(settings_at_load().resolve().duckdb_path, instance)
        print("\n".join(changes) if changes else "nothing to migrate")
        return 0
    if args.command == "label-llm":
        return runner.label_llm(args.benchmarks, batch=args.batch)
    if args.command == "team":
        from . import team_instance

        if args.action == "ui":
            return team_instance.ui(args.port, args.postgres_port)
        postgres = team_instance.cluster(args.postgres_port)
        if args.action == "start":
            print(f"PostgreSQL {postgres.start()} on 127.0.0.1:{postgres.port}; Dagster home {team_instance.team_home(postgres)}")
        else:
            postgres.stop()
        return 0
    if args.command == "fetch":
        return runner.fetch_sources()
    if args.command == "notice":
        return notice_command(check=args.check)
    if args.command == "estimate-llm":
        import json

        print(json.dumps(runner.estimate_llm(batch=args.batch, benchmarks=args.benchmarks or None), indent=2))
        return 0
    dagster_instance.open_instance().dispose()  # made if new, its pools given their slots (dagster_instance.configure_pools)
    print(dagster_instance.dagster_home())
    return 0


def log_to_stderr() -> None:
    """The project's own messages (pools: who a waiting step waits for) at INFO on stderr."""
    import logging

    logger = logging.getLogger("workbank_dagster")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s - workbank - %(levelname)s - %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def notice_command(*, check: bool) -> int:
    from .sources.benchmark_set import NOTICE_PATH, notice_text, read_catalog

    text = notice_text(read_catalog())
    current = NOTICE_PATH.read_text(encoding="utf-8") if NOTICE_PATH.is_file() else ""
    if check:
        print("benchmarks/NOTICE.md matches the catalog" if current == text else "benchmarks/NOTICE.md is out of date: run `cli notice`")
        return 0 if current == text else 1
    if current != text:
        NOTICE_PATH.write_text(text, encoding="utf-8")
    print(f"{NOTICE_PATH.relative_to(REPO_ROOT)} written from benchmarks/catalog.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
