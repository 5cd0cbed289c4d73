"""The Definitions object and nothing else."""

import dagster as dg

from .analysis.assets import analysis_assets
from .audits.assets import audit_files_observed, user_audit, user_audit_catalog
from .automation import (
    all_assets_job,
    audit_files_sensor,
    benchmark_files_sensor,
    benchmark_partitions_job,
    llm_labeling_job,
    user_audits_job,
    warehouse_after_partitions,
    warehouse_job,
    weekly_refresh,
)
from .labeling.catalog import label_catalog
from .labeling.chat_model import ChatModelResource
from .labeling.judge_assets import embedded_judge_labels, llm_judge_labels
from .labeling.matching import LabelingRuntime
from .labeling.onet_assets import occupation_prior, task_index
from .labeling.validation_asset import judge_validation
from .report.assets import report_assets
from .resources import WarehouseFromSettings
from .settings import CONCERNS, PipelineSettings, settings_at_load
from .sources.assets import file_assets, raw_assets
from .sources.benchmark_assets import (
    benchmark_instructions,
    benchmark_prompt_files,
    benchmark_prompts,
    benchmark_result_files,
    benchmark_results,
)
from .sources.catalog import benchmark_catalog, source_files
from .transform.assets import dbt_models
from .transform.project import DbtCli, dbt_executable, dbt_project

# The environment is read here, once, as the definitions load; the launchpad shows the settings
# resources' fields, with the environment's values, and a run may override them. Each is given as
# configurable at launch so that the resources built on it (pipeline_settings, warehouse_db) follow a
# run's values too.
_at_load = settings_at_load()
settings_resources = {key: concern.configure_at_launch(**getattr(_at_load, key).model_dump(exclude_unset=True)) for key, concern in CONCERNS.items()}

defs = dg.Definitions(
    assets=[*file_assets, benchmark_prompt_files, benchmark_result_files, *raw_assets, benchmark_prompts, benchmark_results, benchmark_instructions, benchmark_catalog, source_files, task_index, occupation_prior, embedded_judge_labels, llm_judge_labels, label_catalog, judge_validation, dbt_models, *analysis_assets, audit_files_observed, user_audit, user_audit_catalog, *report_assets],
    jobs=[all_assets_job, benchmark_partitions_job, warehouse_job, llm_labeling_job, user_audits_job],
    sensors=[benchmark_files_sensor, warehouse_after_partitions, audit_files_sensor],
    schedules=[weekly_refresh],
    resources={
        **settings_resources,
        "pipeline_settings": PipelineSettings(**settings_resources),
        "warehouse_db": WarehouseFromSettings(paths=settings_resources["paths"]),
        "chat_model": ChatModelResource.from_env(),
        "labeling_runtime": LabelingRuntime(),
        "dbt": DbtCli(project_dir=dbt_project, dbt_executable=dbt_executable()),
    },
)
