"""Thin analysis assets over the pure functions: read the marts, write schema `analysis`. The steps
over the task table are here; those over the judges' labels are in label_steps.py, and what every
step shares (reading, keeping, writing) in step.py."""

from collections.abc import Callable

import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import versioned_asset
from ..common import table_metadata, warehouse_step
from ..fingerprint import content_version
from ..resources import WarehouseResource
from ..settings import PipelineSettings
from .columns import TABLES
from .comparison import threshold_ratios
from .label_steps import coverage_sensitivity_assets, judge_ratio_assets, label_uncertainty, model_scores
from .regressions import coverage_logit, importance_logit
from .step import SCHEMA, TASK_DEPS, analysis_step, computed_or_kept, key, read_task_frame, regression_frame, task_frame, threshold_frame
from .telework import telework_split
from .zones import agency_table, coverage_by_zone, task_zones, unbenchmarked_green_light


@analysis_step("coverage_regression", ["coverage_logit_coefs", "coverage_logit_curve", "coverage_logit_ratio"], TASK_DEPS)
def coverage_regression(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    tasks = regression_frame(read_task_frame(warehouse_db))
    yield from computed_or_kept(context, warehouse_db, coverage_tables, tasks, pipeline_settings.method.cluster_level)


def coverage_tables(tasks: pd.DataFrame, cluster_level: str) -> dict[str, pd.DataFrame]:
    fit = coverage_logit(tasks, cluster_level=cluster_level)
    ratio = pd.DataFrame(
        [{"statistic": "exposure_coverage_ratio", "estimate": fit.ratio[0], "ci_low": fit.ratio[1], "ci_high": fit.ratio[2], "n_obs": fit.n_obs, "n_clusters": fit.n_clusters, "n_tasks_without_exposure_or_wage": fit.n_dropped_unlabeled}]
    )
    return {"coverage_logit_coefs": fit.coefs, "coverage_logit_curve": fit.curve, "coverage_logit_ratio": ratio}


@analysis_step("importance_regression", ["importance_logit", "importance_logit_ratio"], TASK_DEPS)
def importance_regression(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    tasks = regression_frame(read_task_frame(warehouse_db))
    yield from computed_or_kept(context, warehouse_db, importance_tables, tasks, pipeline_settings.method.cluster_level)


def importance_tables(tasks: pd.DataFrame, cluster_level: str) -> dict[str, pd.DataFrame]:
    fit = importance_logit(tasks, cluster_level=cluster_level)
    ratio = pd.DataFrame(
        [{"statistic": "importance_top_bottom_ratio", "estimate": fit.ratio[0], "ci_low": fit.ratio[1], "ci_high": fit.ratio[2], "n_obs": fit.n_obs, "occupations_kept": fit.occupations_kept, "occupations_dropped": fit.occupations_dropped}]
    )
    return {"importance_logit": fit.adjusted, "importance_logit_ratio": ratio}


@analysis_step("ratios_by_threshold", ["ratios_by_threshold"], TASK_DEPS)
def ratios_by_threshold(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    """Both ratios, simple and model-adjusted, at every sensitivity threshold (analysis/comparison.py)."""
    settings = pipeline_settings.resolve()
    thresholds = tuple(sorted(set(settings.sensitivity_thresholds) | {settings.coverage_threshold}))
    tasks = threshold_frame(read_task_frame(warehouse_db), thresholds)
    yield from computed_or_kept(context, warehouse_db, ratio_tables, tasks, thresholds, settings.cluster_level)


def ratio_tables(tasks: pd.DataFrame, thresholds: tuple[int, ...], cluster_level: str) -> dict[str, pd.DataFrame]:
    return {"ratios_by_threshold": threshold_ratios(tasks, thresholds, cluster_level)}


WORKBANK_DEPS = [key("marts", "fct_workbank_worker_ratings"), key("marts", "fct_workbank_expert_ratings"), *TASK_DEPS]


@analysis_step("workbank_audit", ["workbank_task_zones", "workbank_agency_table", "coverage_by_zone", "unbenchmarked_green_light"], WORKBANK_DEPS)
def workbank_audit(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource):
    with warehouse_db.connect() as con:
        workers = con.execute("select task_id, automation_desire, human_agency_scale from marts.fct_workbank_worker_ratings").df()
        experts = con.execute("select task_id, automation_capacity, human_agency_scale from marts.fct_workbank_expert_ratings").df()
        tasks = task_frame(con)
    yield from computed_or_kept(context, warehouse_db, workbank_tables, workers, experts, tasks, log=context.log.info)


def workbank_tables(workers: pd.DataFrame, experts: pd.DataFrame, tasks: pd.DataFrame, *, log: Callable[[str], None]) -> dict[str, pd.DataFrame]:
    zones, ties = task_zones(workers, experts)
    zones = zones.merge(tasks[["task_id", "onet_soc_code", "task", "occupation_title", "n_prompts", "covered", "hours"]], on="task_id", how="left")
    zones["covered"] = zones["covered"].fillna(False).astype(bool)
    zones["n_prompts"] = zones["n_prompts"].fillna(0).astype("int64")
    columns = ["task_id", "onet_soc_code", "mean_desire", "mean_capability", "zone", "n_workers", "n_experts", "modal_has_worker", "modal_has_expert", "n_prompts", "covered"]
    zone_table = zones[columns + ["hours", "task", "occupation_title"]]
    green = unbenchmarked_green_light(zone_table)[["task_id", "onet_soc_code", "occupation_title", "task", "mean_desire", "mean_capability", "hours", "n_prompts"]]
    log(f"modal Human Agency Scale ties: {ties}")
    return {
        "workbank_task_zones": zone_table,
        "workbank_agency_table": agency_table(zones),
        "coverage_by_zone": coverage_by_zone(zone_table),
        "unbenchmarked_green_light": green,
    }


@versioned_asset(
    key=[SCHEMA, "uncovered_by_telework"],
    deps=[*TASK_DEPS, key("marts", "dim_telework_soc_2010"), key("marts", "dim_soc_2010_2018_crosswalk")],
    description=TABLES["uncovered_by_telework"],
    **warehouse_step("analysis", "team:analysis"),
)
def uncovered_by_telework(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    with warehouse_db.connect() as con:
        tasks = task_frame(con)
        telework = con.execute("select onet_soc_2010_code as onet_soc_code, teleworkable from marts.dim_telework_soc_2010").df()
        crosswalk = con.execute("select soc_2010_code, soc_2018_code from marts.dim_soc_2010_2018_crosswalk").df()
    table, matching = telework_split(tasks, telework, crosswalk)
    with warehouse_db.connect() as con:
        warehouse.replace_table(con, SCHEMA, "uncovered_by_telework", table)
    averaging = matching.pop("averaging")
    unmatched = matching["hours_unmatched_share"]
    context.log.info(
        f"telework: {matching['exact']} exact, {matching['crosswalk']} through the SOC 2010->2018 crosswalk, "
        f"{matching['unmatched']} unmatched occupations; unmatched share of work hours {'n/a' if unmatched is None else f'{unmatched:.2%}'}"
    )
    metadata = {**table_metadata(table), "matching": dg.MetadataValue.json(matching), "averaging": dg.MetadataValue.text(averaging)}
    if unmatched is not None:
        metadata["hours_unmatched_share"] = dg.MetadataValue.float(unmatched)
    return dg.MaterializeResult(metadata=metadata, data_version=content_version(table))


analysis_assets = [
    coverage_regression, importance_regression, ratios_by_threshold, coverage_sensitivity_assets, judge_ratio_assets, label_uncertainty, model_scores, workbank_audit,
    uncovered_by_telework,
]
__all__ = ["analysis_assets"]
