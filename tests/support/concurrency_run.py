"""One pipeline run in its own process, for tests/scenarios/test_concurrency.py and test_idempotency.py.

    python tests/support/concurrency_run.py multiprocess [MAX_CONCURRENT] [KEY ...]
        job all_assets over every benchmark partition (single-run backfill), multiprocess executor;
        KEYs (`raw/benchmark_prompts`) restrict it to those assets
    python tests/support/concurrency_run.py in_process [KEY ...]            the same run, in-process executor
    python tests/support/concurrency_run.py refresh PARTITION               job benchmark_partitions for one partition
                                                                    (what the sensor launches), then job warehouse
                                                                    (what warehouse_after_partitions then launches), in-process
    python tests/support/concurrency_run.py warehouse                       job warehouse alone, in-process (the negative
                                                                    control of test_scaleout.py runs two at once)
    python tests/support/concurrency_run.py cli                             `make run` (workbank_dagster.cli run)
    python tests/support/concurrency_run.py audits                          job user_audits over every audit partition

The environment says where (WORKBANK_*, DAGSTER_HOME). The benchmark partitions must already be in
the instance for the first two modes (`cli` syncs them itself).

Test-only knob: WORKBANK_TEST_LOCK_WAIT_SECONDS replaces the warehouse's lock wait (default 300 s)
in this process and in the step processes it starts, e.g. 0 to see what a run does without the
connect-with-retry (see test_concurrency.py's docstring).
"""

from __future__ import annotations

import os
import sys
import warnings


def _apply_lock_wait_override() -> None:
    value = os.environ.get("WORKBANK_TEST_LOCK_WAIT_SECONDS")
    if value is None or value == "":
        return
    from workbank_dagster import warehouse

    # `connect` is a contextmanager; its keyword-only default was bound at definition time.
    warehouse.connect.__wrapped__.__kwdefaults__["wait_seconds"] = float(value)
    warehouse.LOCK_WAIT_SECONDS = float(value)


# On import, so that step processes (which import this module to rebuild the job) get it too; never
# in the pytest process that imports this module for pipeline_env.
if "pytest" not in sys.modules:
    _apply_lock_wait_override()


def pipeline_env(root, sources, cache) -> dict[str, str]:
    """The environment of a run whose data, instance and judgements live under `root`."""
    from workbank_dagster.settings import REPO_ROOT

    return {
        **os.environ,
        "WORKBANK_DATA_DIR": str(root / "data"),
        "WORKBANK_SOURCE_DIR": str(sources),
        "WORKBANK_CACHE_DIR": str(cache),
        "WORKBANK_JUDGEMENT_CACHE": str(root / "judgements.sqlite"),
        "DAGSTER_HOME": str(root / "dagster_home"),
        "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "tests" / "support"), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }


def all_assets_job():
    """The job, from a module-level function: what dg.reconstructable needs for multiprocess."""
    from workbank_dagster.runner import get_all_assets_job

    return get_all_assets_job()


def _print_failures(result) -> None:
    if result.success:
        return
    for event in result.all_events:
        if event.is_failure:
            print(event.message, file=sys.stderr)
            if event.event_type_value == "STEP_FAILURE" and event.step_failure_data.error:
                print(event.step_failure_data.error.to_string(), file=sys.stderr)


def partitions_job():
    from workbank_dagster.runner import get_partitions_job

    return get_partitions_job()


def warehouse_job():
    from workbank_dagster.runner import get_warehouse_job

    return get_warehouse_job()


def run_refresh(partition: str) -> int:
    import dagster as dg

    from workbank_dagster import dagster_instance

    dagster_instance.dagster_home()
    instance = dg.DagsterInstance.get()
    in_process = {"execution": {"config": {"in_process": {}}}}
    result = dg.execute_job(
        dg.reconstructable(partitions_job),
        instance=instance,
        tags={"dagster/partition": partition, "workbank/trigger": "test refresh"},
        run_config=in_process,
    )
    if result.success:
        result = dg.execute_job(dg.reconstructable(warehouse_job), instance=instance, tags={"workbank/trigger": "test refresh"}, run_config=in_process)
    print(f"run {result.run_id} {'succeeded' if result.success else 'failed'} (refresh {partition})")
    _print_failures(result)
    instance.dispose()
    return 0 if result.success else 1


def run_audits() -> int:
    """Job user_audits over every audit partition, whatever Dagster calls stale (`make run` asks)."""
    import dagster as dg

    from workbank_dagster import dagster_instance, runner

    dagster_instance.dagster_home()
    instance = dg.DagsterInstance.get()
    keys = instance.get_dynamic_partitions("audits")
    result = runner.launch(runner.get_audits_job, instance, runner.partition_range_tags(keys, "test audits"))
    print(f"run {result.run_id} {'succeeded' if result.success else 'failed'} (audits)")
    _print_failures(result)
    instance.dispose()
    return 0 if result.success else 1


def run_warehouse() -> int:
    import dagster as dg

    from workbank_dagster import dagster_instance

    dagster_instance.dagster_home()
    instance = dg.DagsterInstance.get()
    result = dg.execute_job(
        dg.reconstructable(warehouse_job), instance=instance, tags={"workbank/trigger": "test warehouse"}, run_config={"execution": {"config": {"in_process": {}}}}
    )
    print(f"run {result.run_id} {'succeeded' if result.success else 'failed'} (warehouse)")
    _print_failures(result)
    instance.dispose()
    return 0 if result.success else 1


def run_job(executor: str, max_concurrent: int = 2, keys: list[str] | None = None) -> int:
    import dagster as dg

    from workbank_dagster import dagster_instance, runner

    dagster_instance.dagster_home()
    instance = dg.DagsterInstance.get()
    partitions = instance.get_dynamic_partitions("benchmarks")
    if not partitions:
        print("no benchmark partitions in the instance", file=sys.stderr)
        return 2
    if executor == "multiprocess":
        # Step processes forked from a server that has the definitions imported already: a spawned
        # process would spend 10-30 s per step importing dagster, dbt and pandas on 2 cores.
        preload = ["concurrency_run", "workbank_dagster.definitions"]
        execution = {"multiprocess": {"max_concurrent": max_concurrent, "start_method": {"forkserver": {"preload_modules": preload}}}}
    else:
        execution = {"in_process": {}}
    result = dg.execute_job(
        dg.reconstructable(all_assets_job),
        instance=instance,
        tags=runner.partition_range_tags(partitions, f"test {executor}"),
        run_config={"execution": {"config": execution}},
        asset_selection=[dg.AssetKey(key.split("/")) for key in keys] if keys else None,
    )
    print(f"run {result.run_id} {'succeeded' if result.success else 'failed'} ({executor}, {len(partitions)} partitions)")
    _print_failures(result)
    instance.dispose()
    return 0 if result.success else 1


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    mode = argv[0] if argv else "multiprocess"
    if mode == "cli":
        from workbank_dagster import cli

        return cli.main(["run"])
    if mode == "warehouse":
        return run_warehouse()
    if mode == "audits":
        return run_audits()
    if mode == "refresh" and len(argv) == 2:
        return run_refresh(argv[1])
    if mode == "multiprocess":
        return run_job(mode, int(argv[1]) if len(argv) > 1 else 2, argv[2:])
    if mode == "in_process":
        return run_job(mode, keys=argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    # Import this file as the module `concurrency_run` (not __main__) so that reconstructable()
    # can point step processes at it.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import concurrency_run

    sys.exit(concurrency_run.main(sys.argv[1:]))
