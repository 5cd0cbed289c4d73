"""Materialize the LLM labels of one benchmark partition in its own process (for the crash test)."""

import sys
import warnings

import dagster as dg

from workbank_dagster.labeling.chat_model import ChatModelResource
from workbank_dagster.labeling.judge_assets import llm_judge_labels
from workbank_dagster.labeling.matching import LabelingRuntime
from workbank_dagster.resources import Warehouse
from workbank_dagster.settings import PipelineSettings

warnings.filterwarnings("ignore")

if __name__ == "__main__":
    partition = sys.argv[1]
    settings = PipelineSettings.from_env()
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", [partition])
    result = dg.materialize(
        [llm_judge_labels],
        instance=instance,
        partition_key=partition,
        resources={
            "pipeline_settings": settings,
            "warehouse_db": Warehouse(settings.resolve().duckdb_path),
            "chat_model": ChatModelResource.from_env(),
            "labeling_runtime": LabelingRuntime(),
        },
        raise_on_error=False,
    )
    sys.exit(0 if result.success else 1)
