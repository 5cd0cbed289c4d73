"""The judges' validation as an asset: every labeler found in the labeling schema, scored against the
benchmark authors' development labels (per half of the committed split) and against the reference
set kept in `reference/`."""

import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import versioned_asset
from ..common import table_metadata, warehouse_step
from ..fingerprint import content_version
from ..resources import WarehouseResource
from ..settings import REPO_ROOT, PipelineSettings
from .catalog import CATALOG_TABLE
from .label_files import JUDGES, LABELING_SCHEMA, judgements_table, labels_table
from .validation import (
    REFERENCE_LEVELS,
    dev_outcomes,
    occupations_with_coverage,
    reference_outcomes,
    score_against_dev,
    score_against_intent,
    score_against_reference,
    statement_groups,
)
from .yardsticks import dev_gold, read_intent, read_reference, read_reference_split, read_split, reference_subsets

REFERENCE_LABELS = REPO_ROOT / "reference" / "reference_labels.jsonl"
LABELS_DEV_SPLIT = REPO_ROOT / "reference" / "labels_dev_split.csv"
REFERENCE_SPLIT = REPO_ROOT / "reference" / "reference_split.csv"
INTENT_SPLIT = REPO_ROOT / "reference" / "intent_split.csv"
INTENT_FILE = "benchmark_intent.jsonl"
VALIDATION_TABLE = "judge_validation"
VALIDATION_COLUMNS = ["labeler", "yardstick", "subset", "benchmark", "level", "metric", "value", "ci_low", "ci_high", "n_prompts"]
# One row per (labeler, yardstick prompt): what the figures above are means of, and what the
# label-uncertainty band's calibration is fitted on (analysis/uncertainty.py, tune half only).
PROMPTS_TABLE = "judge_validation_prompts"
PROMPT_COLUMNS = ["labeler", "yardstick", "subset", "benchmark", "prompt_id", "n_labels", "occupation_top1", "family_top1"]


def prompt_rows(labeler: str, yardstick: str, outcomes: list[dict]) -> list[dict]:
    """A labeler's per-prompt outcomes on one yardstick as table rows (occupation_top1 NULL where the
    yardstick gives no occupation: TheAgentCompany's roles)."""
    return [
        {"labeler": labeler, "yardstick": yardstick, "subset": o["half"], "benchmark": o["benchmark"], "prompt_id": o["prompt_id"],
         "n_labels": o["n_labels"], "occupation_top1": o["occupation_top1"] if o["has_occupation"] else None, "family_top1": o["family_top1"]}
        for o in outcomes
    ]


def validation_rows(labeler: str, dev: list[dict], references: dict[str, dict], intent: list[dict] = ()) -> list[dict]:
    """The table's rows: the labels_dev figures, the benchmark-intent figures, then the reference
    set's of each subset (all, tune, holdout)."""
    rows = [{"labeler": labeler, "yardstick": "labels_dev", **figure} for figure in dev]
    rows += [{"labeler": labeler, "yardstick": "intent", **figure} for figure in intent]
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


@versioned_asset(
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
    labels_dev = settings.labels_dev_dir
    if labels_dev is None:
        context.log.info("labels_dev skipped: the optional yardstick stays outside the repository, and neither the source folder "
                         "nor ../shared/data beside the repository has benchmarks/labels_dev; the judges are scored against the "
                         "reference set only")
    gold = dev_gold(labels_dev, occupations, crosswalk, read_split(LABELS_DEV_SPLIT))
    reference = read_reference(REFERENCE_LABELS) if REFERENCE_LABELS.is_file() else None
    reference_split = read_reference_split(REFERENCE_SPLIT) if reference is not None else {}
    intent_path = labels_dev / INTENT_FILE if labels_dev is not None else None
    intent = read_intent(intent_path) if intent_path is not None and intent_path.is_file() else None
    if intent is None:
        context.log.info(f"benchmarks/labels_dev/{INTENT_FILE} not found beside the sources: the benchmark-intent yardstick "
                         "(optional, kept outside the repository) is skipped")
    intent_split = read_reference_split(INTENT_SPLIT)
    # Every judge's labels, one file per benchmark (partition_files.py): the rows of the benchmarks
    # the yardsticks name, and of every benchmark only which labeler labeled (or abstained on) it,
    # and, for the intent yardstick's "primary covered", its prompts per task (summed over the files:
    # a prompt is in one benchmark's file).
    files = settings.partition_files
    scored = sorted(
        set(gold["benchmark"]) | (set(reference["benchmark"]) if reference is not None else set()) | (set(intent["benchmark"]) if intent is not None else set())
    )
    labels = _rows(files, labels_table, "SELECT * FROM {table}", scored)
    abstained = _rows(files, judgements_table, "SELECT benchmark, prompt_id, labeler FROM {table} WHERE status = 'abstained'", scored)
    labeled_at_all = _rows(files, labels_table, "SELECT DISTINCT labeler, benchmark FROM {table}")
    abstained_at_all = _rows(files, judgements_table, "SELECT DISTINCT labeler, benchmark FROM {table} WHERE status = 'abstained'")
    per_task = (
        _rows(files, labels_table, "SELECT labeler, task_id, count(DISTINCT (benchmark, prompt_id)) AS n_prompts FROM {table} GROUP BY ALL")
        if intent is not None
        else None
    )
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))]
    task_occupation = dict(zip(tasks["task_id"].astype(int), tasks["onet_soc_code"]))
    same_statement = statement_groups(tasks)
    task_dwas = None
    if dwas is not None:
        task_dwas = {}
        for task_id, dwa_id in zip(dwas["task_id"].astype(int), dwas["dwa_id"]):
            task_dwas.setdefault(int(task_id), set()).add(dwa_id)
    rows, prompts, summary = [], [], {}
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
        intent_figures = (
            score_against_intent(group, task_occupation, intent, occupations_with_coverage(per_task[per_task["labeler"] == labeler], task_occupation,
                                                                                        settings.coverage_threshold), intent_split)
            if intent is not None and per_task is not None
            else []
        )
        rows.extend(validation_rows(labeler, dev, refs, intent_figures))
        prompts.extend(prompt_rows(labeler, "labels_dev", dev_outcomes(group, task_occupation, gold, skipped)))
        if reference is not None and len(mine_ref):
            prompts.extend(prompt_rows(labeler, "reference", reference_outcomes(group, task_occupation, mine_ref, reference_split)))
        summary[labeler] = {
            "holdout": {f"{f['benchmark']}:{f['level']}:{f['metric']}": f["value"] for f in dev if f["subset"] == "holdout"},
            "reference": refs.get("all"),
            "reference_holdout": refs.get("holdout"),
            "intent": {f"{f['subset']}:{f['benchmark']}:{f['metric']}": f["value"] for f in intent_figures},
        }
    table = pd.DataFrame(rows, columns=VALIDATION_COLUMNS).astype(
        {"value": "Float64", "ci_low": "Float64", "ci_high": "Float64", "n_prompts": "Int64"}
    )
    for column in ("labeler", "yardstick", "subset", "benchmark", "level", "metric"):
        table[column] = table[column].astype("string")
    per_prompt = pd.DataFrame(prompts, columns=PROMPT_COLUMNS).astype({"n_labels": "Int64", "occupation_top1": "boolean", "family_top1": "boolean"})
    for column in ("labeler", "yardstick", "subset", "benchmark", "prompt_id"):
        per_prompt[column] = per_prompt[column].astype("string")
    with warehouse_db.connect() as con:
        warehouse.replace_table(con, LABELING_SCHEMA, VALIDATION_TABLE, table)
        warehouse.replace_table(con, LABELING_SCHEMA, PROMPTS_TABLE, per_prompt)
    return dg.MaterializeResult(
        metadata={**table_metadata(table), "summary": dg.MetadataValue.json(summary), "prompts_table": f"{LABELING_SCHEMA}.{PROMPTS_TABLE}", "prompt_rows": len(per_prompt)},
        data_version=content_version(table, per_prompt),
    )
