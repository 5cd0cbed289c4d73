"""Materialize the LLM labels of one benchmark partition in its own process (for the crash test)."""

import sys
import warnings

import dagster as dg

from workbank_dagster.labeling.assets import llm_judge_labels
from workbank_dagster.labeling.matching import LabelingRuntime
from workbank_dagster.resources import default_chat_model, default_warehouse

warnings.filterwarnings("ignore")

if __name__ == "__main__":
    partition = sys.argv[1]
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", [partition])
    result = dg.materialize(
        [llm_judge_labels],
        instance=instance,
        partition_key=partition,
        resources={"warehouse_db": default_warehouse(), "chat_model": default_chat_model(), "labeling_runtime": LabelingRuntime()},
        raise_on_error=False,
    )
    sys.exit(0 if result.success else 1)
