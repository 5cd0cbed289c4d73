"""What the judges hold, per benchmark partition, and nothing of a benchmark that left.

A removed benchmark file loses its Dagster partition (the sensor, `make run`), so no labeling run of
its own ever comes to delete its labels. `labeling/label_catalog` runs unpartitioned inside every run
(pool `warehouse`) after the partitions are labeled: it deletes the label and judgement files
(partition_files.py) of every benchmark that no longer has a partition, then writes one row per
(benchmark, labeler) of what is left. Labeling owns these files, so labeling prunes them; the raw
files leave in `raw/benchmark_catalog`, the sources' own step. Cached judgements and embeddings
(stores outside the warehouse) stay: they were paid for. It also drops the warehouse tables the
labels lived in before they moved to files, and `labeling.embedded_label_inputs`, where the label
input keys were kept before they moved into the labels' materializations.
"""


import json

import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import versioned_asset
from ..common import table_metadata, warehouse_step
from ..fingerprint import content_version
from ..partition_files import PartitionFiles
from ..partitions import benchmarks_partitions
from ..resources import WarehouseResource
from ..settings import PipelineSettings
from .label_files import CANDIDATES_TABLE, JUDGES, LABELING_SCHEMA, judgements_table, labels_table
from .matching import default_judge, embedded_judge_v3

CATALOG_TABLE = "label_catalog"
RULES_TABLE = "labeler_rules"
LLM_RULE = (
    "sends each prompt with the default embedded judge's candidate tasks (and its benchmark's instruction in the candidates' "
    "retrieval) to a chat model, which chooses the tasks the prompt exercises among them"
)
CATALOG_COLUMNS = ["benchmark", "labeler", "n_prompts_judged", "n_prompts_labeled", "n_labels"]
# Every labeling table that holds rows per benchmark.
PER_BENCHMARK = (*(table for judge in JUDGES for table in (labels_table(judge), judgements_table(judge))), CANDIDATES_TABLE)


def prune_removed(files: PartitionFiles, current: list[str]) -> dict[str, int]:
    """Delete the files of benchmarks not in `current` from every labeling table; files deleted per table."""
    removed = files.remove_except(PER_BENCHMARK, current)
    return {f"{LABELING_SCHEMA}.{table}": n for table, n in removed.items()}


def judged_per_benchmark(files: PartitionFiles, current: list[str]) -> pd.DataFrame:
    """benchmark, labeler, prompts judged, prompts labeled, labels: every judge's records as they stand."""
    parts = []
    for judge in JUDGES:
        judged = files.query(
            judgements_table(judge),
            "SELECT benchmark, labeler, count(*) AS n_prompts_judged, count(*) FILTER (WHERE status = 'labeled') AS n_prompts_labeled "
            "FROM {table} GROUP BY ALL",
            current,
        )
        if judged is None:
            continue
        labels = files.query(labels_table(judge), "SELECT benchmark, labeler, count(*) AS n_labels FROM {table} GROUP BY ALL", current)
        if labels is None:
            judged["n_labels"] = 0
        else:
            judged = judged.merge(labels, on=["benchmark", "labeler"], how="left").fillna({"n_labels": 0})
        parts.append(judged)
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CATALOG_COLUMNS)
    frame = frame[CATALOG_COLUMNS].sort_values(["benchmark", "labeler"], ignore_index=True)
    return frame.astype({"benchmark": "string", "labeler": "string", "n_prompts_judged": "Int64", "n_prompts_labeled": "Int64", "n_labels": "Int64"})


def labeler_rules(settings, labelers: list[str]) -> pd.DataFrame:
    """labeler, rule (in words, from the judge's own parameters), parameters (JSON): one row per
    labeler the catalog holds, so the report describes the labeler that fed it."""
    embedded = {judge.labeler: judge for judge in (default_judge(), embedded_judge_v3(settings))}
    rows = []
    for labeler in sorted(set(labelers)):
        judge = embedded.get(labeler)
        if judge is not None:
            rows.append((labeler, judge.summary(), json.dumps(judge.describe(), sort_keys=True, default=str)))
        elif labeler.startswith("llm:"):
            rows.append((labeler, LLM_RULE, "{}"))
    return pd.DataFrame(rows, columns=["labeler", "rule", "parameters"]).astype("string")


@versioned_asset(
    key=[LABELING_SCHEMA, CATALOG_TABLE],
    deps=[dg.AssetKey([LABELING_SCHEMA, table]) for judge in JUDGES for table in (labels_table(judge), judgements_table(judge))],
    **warehouse_step("labeling", "team:labeling"),
    description="One row per (benchmark, labeler): prompts judged and labeled, labels; the labeling files of every benchmark "
    "whose partition is gone are deleted first. Beside it, labeling.labeler_rules: each labeler's rule in words, from its own parameters.",
)
def label_catalog(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    current = list(context.instance.get_dynamic_partitions(benchmarks_partitions.name))
    files = pipeline_settings.resolve().partition_files
    deleted = prune_removed(files, current)
    with warehouse_db.connect() as con:
        table = judged_per_benchmark(files, current)
        warehouse.replace_table(con, LABELING_SCHEMA, CATALOG_TABLE, table)
        warehouse.replace_table(con, LABELING_SCHEMA, RULES_TABLE, labeler_rules(pipeline_settings.resolve(), table["labeler"].tolist()))
    if deleted:
        context.log.info(f"labels of benchmarks without a partition removed: {deleted}")
    return dg.MaterializeResult(metadata={**table_metadata(table), "files_deleted": dg.MetadataValue.json(deleted)}, data_version=content_version(table))
