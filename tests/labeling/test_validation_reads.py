"""Judge validation reads the labels of the benchmarks its yardsticks name, and of every other
benchmark only which labeler labeled it (labeling/validation_asset.py): a labeler can then have no
label row among the rows read, and is scored as one that labeled none of the yardsticks' prompts."""

from __future__ import annotations

import pandas as pd

from workbank_dagster.labeling.validation import _ranked_tasks, score_against_dev


def test_a_labeler_with_no_label_read_is_scored_as_labeling_nothing():
    empty = pd.DataFrame(columns=["benchmark", "prompt_id", "task_id", "rank"])
    assert _ranked_tasks(empty, {("gdpval", "1")}) == {}  # the list mask selected no columns of an empty frame: KeyError
    gold = pd.DataFrame(
        [("gdpval", "1", "x", "holdout", {"11-1011.00"}, {"11"}), ("theagentcompany", "2", "y", "tune", set(), {"15"})],
        columns=["benchmark", "prompt_id", "gold", "half", "gold_codes", "gold_families"],
    )
    figures = {(f["subset"], f["benchmark"], f["level"], f["metric"]): f["value"] for f in score_against_dev(empty, {}, gold)}
    assert figures[("all", "all", "family", "top1")] == 0.0 and figures[("holdout", "gdpval", "occupation", "top1")] == 0.0
    one = pd.DataFrame([("gdpval", "1", 5, 1)], columns=["benchmark", "prompt_id", "task_id", "rank"])
    figures = {(f["subset"], f["benchmark"], f["level"], f["metric"]): f["value"] for f in score_against_dev(one, {5: "11-1011.00"}, gold)}
    assert figures[("holdout", "gdpval", "occupation", "top1")] == 1.0
