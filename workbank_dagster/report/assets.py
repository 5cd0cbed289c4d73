"""Report assets: headline.json (and, later, the HTML report)."""


import json

import dagster as dg

from ..resources import WarehouseResource
from ..settings import load_settings
from .headline import headline_numbers

ANALYSIS_DEPS = [
    dg.AssetKey(["analysis", name])
    for name in ("coverage_logit_ratio", "importance_logit_ratio", "work_time_uncovered_interval")
]
MART_DEPS = [dg.AssetKey(["labeling", "judge_validation"]), *ANALYSIS_DEPS] + [
    dg.AssetKey(["marts", name])
    for name in (
        "dim_task",
        "dim_occupation",
        "fct_prompt_task_labels",
        "fct_task_coverage",
        "fct_occupation_coverage",
        "fct_family_coverage",
        "fct_work_time_coverage",
    )
]


@dg.asset(
    key=["report", "headline"],
    deps=MART_DEPS,
    group_name="report",
    kinds={"json"},
    owners=["team:analysis"],
    pool="warehouse",
    description="data/outputs/headline.json: the numbers the report leads with, from the marts.",
)
def headline(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource) -> dg.MaterializeResult:
    settings = load_settings()
    with warehouse_db.connect() as con:
        numbers = headline_numbers(con, settings)
    settings.output_dir.mkdir(parents=True, exist_ok=True)
    path = settings.output_dir / "headline.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(numbers, indent=2, sort_keys=False) + "\n")
    tmp.replace(path)
    return dg.MaterializeResult(metadata={"path": str(path), "headline": dg.MetadataValue.json(numbers)})
