"""The judges' validation as an asset: every labeler found in the labeling schema, scored against the
benchmark authors' development labels (per half of the committed split) and against the reference
set kept in `reference/`."""

import dagster as dg
import pandas as pd

from .. import warehouse
from ..common import table_metadata, warehouse_step
from ..resources import WarehouseResource
from ..settings import REPO_ROOT, PipelineSettings
from .assets import JUDGES, LABELING_SCHEMA, judgements_table, labels_table
from .catalog import CATALOG_TABLE
from .validation import (
    REFERENCE_LEVELS,
    dev_gold,
    read_reference,
    read_reference_split,
    read_split,
    reference_subsets,
    score_against_dev,
    score_against_reference,
    statement_groups,
)

REFERENCE_LABELS = REPO_ROOT / "reference" / "reference_labels.jsonl"
LABELS_DEV_SPLIT = REPO_ROOT / "reference" / "labels_dev_split.csv"
REFERENCE_SPLIT = REPO_ROOT / "reference" / "reference_split.csv"
VALIDATION_TABLE = "judge_validation"
VALIDATION_COLUMNS = ["labeler", "yardstick", "subset", "benchmark", "level", "metric", "value", "ci_low", "ci_high", "n_prompts"]


def validation_rows(labeler: str, dev: list[dict], references: dict[str, dict]) -> list[dict]:
    """The table's rows: the labels_dev figures, then the reference set's of each subset (all, tune, holdout)."""
    rows = [{"labeler": labeler, "yardstick": "labels_dev", **figure} for figure in dev]
    for subset, reference in references.items():
        common = {"labeler": labeler, "yardstick": "reference", "subset": subset, "benchmark": "all", "ci_low": None, "ci_high": None}
        n = reference["n_prompts"]
        for level in REFERENCE_LEVELS:
            if level in reference:
                for metric in ("precision", "recall", "f1"):
                    rows.append({**common, "level": level, "metric": metric, "value": reference[level][metric], "n_prompts": n})
        rows.append({**common, "level": "all", "metric": "labels_per_prompt", "value": reference["labels_per_prompt"], "n_prompts": n})
        rows.append({**common, "level": "all", "metric": "abstained", "value": float(reference["n_abstained"]), "n_prompts": n})
    return rows


def _rows(files, table_of, sql: str, partitions: list[str] | None = None) -> pd.DataFrame | None:
    """`sql` over every judge's table (`table_of(judge)`) of these partitions (every partition: None),
    the judges' rows together; None when no judge has a file."""
    found = [frame for frame in (files.query(table_of(judge), sql, partitions) for judge in JUDGES) if frame is not None]
    return pd.concat(found, ignore_index=True) if found else None


@dg.asset(
    key=[LABELING_SCHEMA, VALIDATION_TABLE],
    deps=[
        dg.AssetKey([LABELING_SCHEMA, labels_table("embedded")]),
        dg.AssetKey([LABELING_SCHEMA, labels_table("llm")]),
        dg.AssetKey([LABELING_SCHEMA, CATALOG_TABLE]),  # removed benchmarks' labels pruned first
        dg.AssetKey(["raw", "onet_oews_crosswalk"]),
        dg.AssetKey(["raw", "onet_task_dwas"]),
    ],
    **warehouse_step("labeling", "team:labeling"),
    description="Each judge scored against benchmarks/labels_dev, per half of the committed split (family and occupation "
    "top-1, occupation precision, labels per labeled prompt, abstained share; Wilson 95% intervals) and against the "
    "reference set, per half of its committed split and in all (precision/recall by exact task ID, same statement, "
    "DWA, occupation, family).",
)
def judge_validation(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
    settings = pipeline_settings.resolve()
    with warehouse_db.connect() as con:
        tasks = con.execute("SELECT task_id, onet_soc_code, task FROM raw.onet_task_statements").df()
        occupations = con.execute("SELECT onet_soc_code, title FROM raw.onet_occupations").df()
        crosswalk = con.execute("SELECT onet_soc_code, oews_title FROM raw.onet_oews_crosswalk").df()
        dwas = warehouse.query_if_exists(con, "raw", "onet_task_dwas", "SELECT DISTINCT task_id, dwa_id FROM {table}")
    gold = dev_gold(settings.benchmarks_dir / "labels_dev", occupations, crosswalk, read_split(LABELS_DEV_SPLIT))
    reference = read_reference(REFERENCE_LABELS) if REFERENCE_LABELS.is_file() else None
    reference_split = read_reference_split(REFERENCE_SPLIT) if reference is not None else {}
    # Every judge's labels, one file per benchmark (partition_files.py): the rows of the benchmarks
    # the yardsticks name, and of every benchmark only which labeler labeled (or abstained on) it.
    files = settings.partition_files
    scored = sorted(set(gold["benchmark"]) | (set(reference["benchmark"]) if reference is not None else set()))
    labels = _rows(files, labels_table, "SELECT * FROM {table}", scored)
    abstained = _rows(files, judgements_table, "SELECT benchmark, prompt_id, labeler FROM {table} WHERE status = 'abstained'", scored)
    labeled_at_all = _rows(files, labels_table, "SELECT DISTINCT labeler, benchmark FROM {table}")
    abstained_at_all = _rows(files, judgements_table, "SELECT DISTINCT labeler, benchmark FROM {table} WHERE status = 'abstained'")
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))]
    task_occupation = dict(zip(tasks["task_id"].astype(int), tasks["onet_soc_code"]))
    same_statement = statement_groups(tasks)
    task_dwas = None
    if dwas is not None:
        task_dwas = {}
        for task_id, dwa_id in zip(dwas["task_id"].astype(int), dwas["dwa_id"]):
            task_dwas.setdefault(int(task_id), set()).add(dwa_id)
    rows, summary = [], {}
    for labeler in (sorted(set(labeled_at_all["labeler"])) if labeled_at_all is not None else []):
        group = labels[labels["labeler"] == labeler] if labels is not None else pd.DataFrame(columns=["benchmark", "prompt_id", "task_id", "rank"])
        mine = abstained[abstained["labeler"] == labeler] if abstained is not None else pd.DataFrame(columns=["benchmark", "prompt_id"])
        skipped = set(zip(mine["benchmark"], mine["prompt_id"]))
        dev = score_against_dev(group, task_occupation, gold, skipped)
        # Score the reference set only on benchmarks this labeler has labeled (or abstained on) at all, per half.
        refs = {}
        if reference is not None:
            seen = {b for frame in (labeled_at_all, abstained_at_all) if frame is not None for b in frame.loc[frame["labeler"] == labeler, "benchmark"]}
            mine_ref = reference[reference["benchmark"].isin(seen)]
            for subset, subset_rows in reference_subsets(mine_ref, reference_split, REFERENCE_SPLIT).items():
                if len(subset_rows):
                    refs[subset] = score_against_reference(
                        group, task_occupation, subset_rows, same_statement=same_statement, task_dwas=task_dwas, abstained=skipped
                    )
        rows.extend(validation_rows(labeler, dev, refs))
        summary[labeler] = {
            "holdout": {f"{f['benchmark']}:{f['level']}:{f['metric']}": f["value"] for f in dev if f["subset"] == "holdout"},
            "reference": refs.get("all"),
            "reference_holdout": refs.get("holdout"),
        }
    table = pd.DataFrame(rows, columns=VALIDATION_COLUMNS).astype(
        {"value": "Float64", "ci_low": "Float64", "ci_high": "Float64", "n_prompts": "Int64"}
    )
    for column in ("labeler", "yardstick", "subset", "benchmark", "level", "metric"):
        table[column] = table[column].astype("string")
    with warehouse_db.connect() as con:
        warehouse.replace_table(con, LABELING_SCHEMA, VALIDATION_TABLE, table)
    return dg.MaterializeResult(metadata={**table_metadata(table), "summary": dg.MetadataValue.json(summary)})
