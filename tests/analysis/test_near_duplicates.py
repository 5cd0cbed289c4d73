"""How a label on one of near-identical task statements is counted (#38, analysis/near_duplicates.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from workbank_dagster.analysis.near_duplicates import by_prompt_code, labels_with_twins, near_duplicate_counts

OWNER = {1: "A", 2: "B", 3: "C", 4: "A", 5: "B", 6: None}
# 1 (A) ~ 2 (B) ~ 3 (C) are one piece of work listed three times; 4 (A) and 5 (B) have no twin.
TWINS = pd.DataFrame(
    [(1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2)], columns=["task_id", "twin_task_id"]
)


def _labels(rows):
    return pd.DataFrame(rows, columns=["benchmark", "prompt_id", "task_id", "rank", "prompt_hash"]).astype({"task_id": "Int64"})


def _sets(frame):
    return {(b, p): sorted(int(t) for t in g["task_id"]) for (b, p), g in frame.groupby(["benchmark", "prompt_id"])}


def test_separate_leaves_the_labels_as_they_are():
    labels = _labels([("x", "p", 2, 1, "h")])
    assert labels_with_twins(labels, TWINS, "separate", OWNER) is labels


def test_together_adds_every_twin_at_the_label_rank_once():
    labels = _labels([("x", "p", 2, 1, "h"), ("x", "p", 3, 2, "h"), ("x", "q", 4, 1, "g")])
    out = labels_with_twins(labels, TWINS, "together", OWNER)
    assert _sets(out) == {("x", "p"): [1, 2, 3], ("x", "q"): [4]}
    assert dict(zip(out.loc[out["prompt_id"] == "p", "task_id"].astype(int), out.loc[out["prompt_id"] == "p", "rank"])) == {2: 1, 1: 1, 3: 1}
    assert out["task_id"].dtype == labels["task_id"].dtype


def test_by_evidence_moves_a_label_to_its_twin_in_the_top_occupation():
    # Rank 1 is an A task (4): the B label 2 has a twin in A (1), so it moves there; 5 (B) has none and stays.
    labels = _labels([("x", "p", 4, 1, "h"), ("x", "p", 2, 2, "h"), ("x", "p", 5, 3, "h")])
    out = labels_with_twins(labels, TWINS, "by_evidence", OWNER)
    assert _sets(out) == {("x", "p"): [1, 4, 5]}
    assert out.loc[out["task_id"] == 1, "rank"].item() == 2
    # A label already in the top occupation stays, and a move onto a task the prompt has is kept once.
    labels = _labels([("x", "p", 1, 1, "h"), ("x", "p", 2, 2, "h")])
    assert _sets(labels_with_twins(labels, TWINS, "by_evidence", OWNER)) == {("x", "p"): [1]}


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown near-duplicate mode 'both'"):
        labels_with_twins(_labels([("x", "p", 1, 1, "h")]), TWINS, "both", OWNER)


def test_counts_are_distinct_prompts_per_task_whether_prompts_are_names_or_codes():
    """near_duplicate_counts counts prompts, not rows (a label read twice counts once), and the step
    reads benchmark and prompt as integer codes: the counts are those of the names. A prompt whose
    rank-1 task has no occupation (6, in y/q) moves no label, not even to a twin of no occupation."""
    tasks = pd.DataFrame({"task_id": list(OWNER), "onet_soc_code": list(OWNER.values())})
    twins = pd.concat([TWINS, pd.DataFrame([(2, 6), (6, 2)], columns=["task_id", "twin_task_id"])], ignore_index=True)
    named = _labels([
        ("x", "p", 4, 1, "h"), ("x", "p", 2, 2, "h"), ("x", "p", 2, 2, "h"),
        ("x", "q", 2, 1, "g"), ("y", "p", 3, 1, "f"), ("y", "p", 6, 2, "f"), ("y", "q", 6, 1, "e"), ("y", "q", 2, 2, "e"),
    ]).drop(columns="prompt_hash")
    counts = near_duplicate_counts(named, twins, tasks)
    assert {mode: counts[mode].to_dict() for mode in counts} == {
        "separate": {2: 3, 3: 1, 4: 1, 6: 2},
        "together": {1: 4, 2: 4, 3: 4, 4: 1, 6: 4},
        "by_evidence": {1: 1, 2: 2, 3: 1, 4: 1, 6: 2},
    }
    coded = named.assign(benchmark=named["benchmark"].map({"x": 0, "y": 1}), prompt_id=named["prompt_id"].map({"p": 0, "q": 1}))
    assert all(dtype.kind == "i" for dtype in coded.dtypes[["benchmark", "prompt_id"]])
    for mode, per_task in near_duplicate_counts(coded, twins, tasks).items():
        pd.testing.assert_series_equal(per_task, counts[mode], check_exact=True)
    # The coverage step's labels: a prompt by its position among every prompt (x/r, y/a unlabeled).
    position = {("x", "p"): 0, ("x", "q"): 1, ("x", "r"): 2, ("y", "a"): 3, ("y", "p"): 4, ("y", "q"): 5}
    step = pd.DataFrame({"prompt": [position[key] for key in zip(named["benchmark"], named["prompt_id"])], "task_id": named["task_id"], "rank": named["rank"]})
    for mode, per_task in near_duplicate_counts(by_prompt_code(step), twins, tasks).items():
        pd.testing.assert_series_equal(per_task, counts[mode], check_exact=True)


@pytest.mark.parametrize("coded", [True, False])
def test_counts_are_those_of_the_labels_counted_each_way(coded):
    """near_duplicate_counts counts distinct (prompt, task) pairs as integers (#42): the counts of
    labels_with_twins' labels, on random labels with rank ties, labels read twice, tasks of no
    occupation or not in the task list, and twins in several occupations."""
    import numpy as np

    from workbank_dagster.analysis.coverage import prompts_per_task

    rng = np.random.default_rng(12)
    n_tasks = 60
    owner = {t: (None if t % 17 == 0 else f"o{t % 7}") for t in range(n_tasks - 5)}  # 55..59 are not tasks
    tasks = pd.DataFrame({"task_id": list(owner), "onet_soc_code": list(owner.values())})
    pairs = {(a, b) for a, b in rng.integers(0, n_tasks, (80, 2)) if a != b}
    twins = pd.DataFrame(sorted(pairs | {(b, a) for a, b in pairs}), columns=["task_id", "twin_task_id"])
    rows = [(b, p, int(rng.integers(0, n_tasks)), int(rng.integers(1, 4))) for b in range(3) for p in range(40) for _ in range(int(rng.integers(1, 5)))]
    labels = pd.DataFrame(rows, columns=["benchmark", "prompt_id", "task_id", "rank"]).sample(frac=1, random_state=1)
    labels = pd.concat([labels, labels.head(20)], ignore_index=True)
    if not coded:
        labels = labels.assign(benchmark="b" + labels["benchmark"].astype(str), prompt_id="p" + labels["prompt_id"].astype(str))
    counts = near_duplicate_counts(labels, twins, tasks)
    for mode in MODES_CHECKED:
        expected = prompts_per_task(labels_with_twins(labels, twins, mode, owner))
        pd.testing.assert_series_equal(counts[mode], expected, check_exact=True)


MODES_CHECKED = ("separate", "together", "by_evidence")
