"""The judges' validation as an asset: every labeler found in the labeling schema, scored against the
benchmark authors' development labels and against the reference set kept in `reference/`."""

import dagster as dg
import pandas as pd

from .. import warehouse
from ..resources import WarehouseResource
from ..settings import REPO_ROOT, load_settings
from ..sources.assets import table_metadata
from .assets import LABELING_SCHEMA, labels_table
from .validation import dev_gold, read_reference, score_against_dev, score_against_reference

REFERENCE_LABELS = REPO_ROOT / "reference" / "reference_labels.jsonl"
VALIDATION_TABLE = "judge_validation"


def validation_rows(labeler: str, dev: dict, reference: dict | None) -> list[tuple]:
    rows = [
        (labeler, "labels_dev", "family", "accuracy", dev["family_accuracy"], dev["n_prompts"]),
        (labeler, "labels_dev", "occupation", "accuracy", dev["occupation_accuracy"], dev["n_prompts_with_occupation"]),
        (labeler, "labels_dev", "all", "labels_per_prompt", dev["labels_per_prompt"], dev["n_prompts"]),
    ]
    for benchmark, value in sorted(dev["family_accuracy_by_benchmark"].items()):
        rows.append((labeler, f"labels_dev:{benchmark}", "family", "accuracy", value, None))
    if reference:
        for level in ("task", "occupation", "family"):
            for metric in ("precision", "recall", "f1"):
                rows.append((labeler, "reference", level, metric, reference[level][metric], reference["n_prompts"]))
        rows.append((labeler, "reference", "all", "labels_per_prompt", reference["labels_per_prompt"], reference["n_prompts"]))
    return rows


@dg.asset(
    key=[LABELING_SCHEMA, VALIDATION_TABLE],
    deps=[dg.AssetKey([LABELING_SCHEMA, labels_table("embedded")]), dg.AssetKey([LABELING_SCHEMA, labels_table("llm")]), dg.AssetKey(["raw", "onet_oews_crosswalk"])],
    group_name="labeling",
    kinds={"python", "duckdb"},
    owners=["team:labeling"],
    pool="warehouse",
    description="Each judge scored against benchmarks/labels_dev (family accuracy of the top label, occupation "
    "accuracy of any label) and against the reference set (precision/recall at task, occupation, family level).",
)
def judge_validation(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    settings = load_settings()
    with warehouse_db.connect() as con:
        tasks = con.execute("SELECT task_id, onet_soc_code FROM raw.onet_task_statements").df()
        occupations = con.execute("SELECT onet_soc_code, title FROM raw.onet_occupations").df()
        crosswalk = con.execute("SELECT onet_soc_code, oews_title FROM raw.onet_oews_crosswalk").df()
        frames = [
            con.execute(f"SELECT * FROM {LABELING_SCHEMA}.{labels_table(judge)}").df()
            for judge in ("embedded", "llm")
            if warehouse.table_exists(con, LABELING_SCHEMA, labels_table(judge))
        ]
    labels = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["benchmark", "prompt_id", "task_id", "rank", "labeler"])
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))]
    task_occupation = dict(zip(tasks["task_id"].astype(int), tasks["onet_soc_code"]))
    gold = dev_gold(settings.benchmarks_dir / "labels_dev", occupations, crosswalk)
    reference = read_reference(REFERENCE_LABELS) if REFERENCE_LABELS.is_file() else None
    rows, summary = [], {}
    for labeler, group in labels.groupby("labeler"):
        judged = set(zip(group["benchmark"], group["prompt_id"]))
        dev = score_against_dev(group, task_occupation, gold)
        # Score the reference set only on benchmarks this labeler has labeled at all.
        ref_rows = reference[reference["benchmark"].isin({b for b, _ in judged})] if reference is not None else None
        ref = score_against_reference(group, task_occupation, ref_rows) if ref_rows is not None and len(ref_rows) else None
        rows.extend(validation_rows(labeler, dev, ref))
        summary[labeler] = {"labels_dev": dev, "reference": ref}
    table = pd.DataFrame(rows, columns=["labeler", "yardstick", "level", "metric", "value", "n_prompts"]).astype({"value": "Float64", "n_prompts": "Int64"})
    with warehouse_db.connect() as con:
        warehouse.replace_table(con, LABELING_SCHEMA, VALIDATION_TABLE, table)
    return dg.MaterializeResult(metadata={**table_metadata(table), "summary": dg.MetadataValue.json(summary)})
