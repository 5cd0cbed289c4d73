"""A user's own audit as a partitioned asset (one partition per audits/<slug>.csv), and the audit catalog."""

from pathlib import Path

import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import versioned_asset
from ..common import file_sha256, table_metadata, warehouse_step
from ..fingerprint import content_version
from ..labeling.matching import LabelingRuntime, match_texts
from ..partitions import audits_partitions
from ..resources import WarehouseResource
from ..settings import PipelineSettings, Settings
from ..sources.benchmarks import check_slug, slug_files
from .tables import audit_table, read_audit


def audit_files(folder: Path) -> dict[str, str]:
    """Hash per audit slug: audits/<slug>.csv; a file whose name is not a safe slug raises, naming it
    (sources/benchmarks.slug_files, the rule of the benchmark files)."""
    return {slug: file_sha256(path) for slug, path in slug_files(folder, ".csv").items()}


AUDIT_FILES = dg.AssetKey(["files", "audits"])


@dg.observable_source_asset(
    key=AUDIT_FILES,
    partitions_def=audits_partitions,
    group_name="analysis",
    description="Each audit file (audits/<slug>.csv); a partition's data version is its file's SHA-256, so a changed "
    "file marks that audit stale. `make run` reports the same observation without a run before it asks Dagster "
    "whether the audits have work to do (runner.run_audits).",
    metadata={"files": "audits/<slug>.csv"},
)
def audit_files_observed(context: dg.OpExecutionContext, pipeline_settings: PipelineSettings) -> dg.DataVersionsByPartition:
    found = audit_files(pipeline_settings.resolve().audits_dir)
    partitioned_run = context.has_partition_key or context.has_partition_key_range
    keys = context.partition_keys if partitioned_run else context.instance.get_dynamic_partitions(audits_partitions.name)
    return dg.DataVersionsByPartition({key: dg.DataVersion(found.get(key, "missing")) for key in keys})


def match_free_text(frame: pd.DataFrame, warehouse_db: WarehouseResource, runtime: LabelingRuntime, settings: Settings) -> pd.DataFrame:
    """The embedded judge's top task for each free-text row (row, task_id, match_score)."""
    free = frame[frame["task_id"].isna()]
    matches = match_texts(free["input_task"].astype(str).tolist(), warehouse_db, runtime, settings, source="audit")
    rows = [(int(row), labels[0][0], labels[0][1]) for row, labels in zip(free["row"], matches) if labels]
    return pd.DataFrame(rows, columns=["row", "task_id", "match_score"])


@versioned_asset(
    key=["analysis", "user_audit"],
    deps=[dg.AssetKey(["marts", "dim_task"]), dg.AssetKey(["marts", "fct_task_coverage"]), dg.AssetKey(["labeling", "task_index"]), AUDIT_FILES],
    partitions_def=audits_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    **warehouse_step("analysis", "team:analysis"),
    description="An organisation's own tasks (audits/<slug>.csv: O*NET task IDs or free text mapped by the embedded "
    "judge, optional desire and capability) with their zones, benchmark coverage and unbenchmarked tasks.",
)
def user_audit(
    context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, labeling_runtime: LabelingRuntime, pipeline_settings: PipelineSettings
) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()
    tasks = warehouse_db.query(
        "select d.task_id, d.task, d.onet_soc_code, c.n_prompts, c.covered from marts.dim_task d join marts.fct_task_coverage c using (task_id)"
    )
    written = {}
    for key in context.partition_keys:
        path = settings.audits_dir / f"{check_slug(key, 'audit partition')}.csv"
        frame = read_audit(path)
        table = audit_table(key, frame, match_free_text(frame, warehouse_db, labeling_runtime, settings), tasks, path)
        with warehouse_db.connect() as con:
            warehouse.replace_rows(con, "analysis", "user_audit", table, {"audit": key})
        written[key] = table
    combined = pd.concat(written.values(), ignore_index=True)
    return dg.MaterializeResult(
        metadata={
            **table_metadata(combined),
            "unbenchmarked_tasks": int(combined["unbenchmarked"].sum()),
            "zones": dg.MetadataValue.json({str(k): int(v) for k, v in combined["zone"].value_counts(dropna=False).items()}),
        },
        # Dagster keeps a version per partition: a run of several audits has none of its own.
        data_version=content_version(combined) if len(written) == 1 else None,
    )


@versioned_asset(
    key=["analysis", "user_audit_catalog"],
    deps=[dg.AssetKey(["analysis", "user_audit"])],
    **warehouse_step("analysis", "team:analysis"),
    description="The audits of this run, one row per audit partition; the rows of every audit whose file (and so partition) is "
    "gone are deleted from analysis.user_audit first. Unpartitioned, so it runs even when no audit is left.",
)
def user_audit_catalog(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    current = sorted(context.instance.get_dynamic_partitions(audits_partitions.name))
    with warehouse_db.connect() as con:
        deleted = warehouse.delete_rows_except(con, "analysis", "user_audit", "audit", current)
        rows = (
            dict(con.execute("select audit, count(*) from analysis.user_audit group by 1").fetchall())
            if warehouse.table_exists(con, "analysis", "user_audit")
            else {}
        )
        table = pd.DataFrame({"audit": current, "n_rows": [int(rows.get(a, 0)) for a in current]}).astype({"audit": "string", "n_rows": "Int64"})
        warehouse.replace_table(con, "analysis", "user_audit_catalog", table)
    if deleted:
        context.log.info(f"user audits without a file removed: {deleted} rows")
    return dg.MaterializeResult(metadata={**table_metadata(table), "rows_deleted": int(deleted)}, data_version=content_version(table))
