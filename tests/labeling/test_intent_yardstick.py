"""The benchmark-intent yardstick (#38): its committed split, and how a judge is scored against it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from workbank_dagster.labeling.validation import covered_occupations, occupations_with_coverage, score_against_intent
from workbank_dagster.labeling.yardsticks import intent_halves, read_intent, read_reference_split
from workbank_dagster.settings import REPO_ROOT

SPLIT = REPO_ROOT / "reference" / "intent_split.csv"


def test_committed_intent_split_is_the_rule_and_keeps_the_reference_halves(source_dir):
    path = source_dir / "benchmarks" / "labels_dev" / "benchmark_intent.jsonl"
    if not path.is_file():
        pytest.skip(f"{path}: the optional intent yardstick is not here")
    intent = read_intent(path)
    reference = read_reference_split(REPO_ROOT / "reference" / "reference_split.csv")
    split = read_reference_split(SPLIT)
    assert split == intent_halves(intent["benchmark"], reference)
    assert sorted(split.values()).count("tune") == sorted(split.values()).count("holdout") == len(split) // 2
    # A benchmark both yardsticks hold is in the same half of each: tuning on one cannot reach the
    # other's held-out half.
    assert all(split[b] == reference[b] for b in set(split) & set(reference))


def test_intent_halves_fill_equal_halves_tune_first_and_respect_the_reference():
    split = intent_halves(["a", "b", "c", "d", "e"], {"a": "holdout", "b": "holdout"})
    assert split["a"] == split["b"] == "holdout"
    assert sorted(split.values()) == ["holdout", "holdout", "holdout", "tune", "tune"]


def _labels(rows):
    return pd.DataFrame(rows, columns=["benchmark", "prompt_id", "task_id", "rank"])


def test_scores_top1_any_and_primary_per_benchmark_and_their_mean():
    owner = {1: "15-1252.00", 2: "15-1251.00", 3: "43-4051.00", 4: "41-2031.00"}
    intent = pd.DataFrame(
        [("code", "write code", "15-1252.00", {"15-1252.00", "15-1251.00"}), ("desk", "serve", "43-4051.00", {"43-4051.00"})],
        columns=["benchmark", "work", "primary", "plausible"],
    )
    labels = _labels(
        [
            ("code", "p1", 2, 1), ("code", "p1", 4, 2),  # top-1 plausible (a programmer)
            ("code", "p2", 4, 1), ("code", "p2", 1, 2),  # top-1 not, but some label plausible
            ("code", "p3", 4, 1),                        # neither
            ("desk", "q1", 4, 1), ("desk", "q1", 3, 2),  # any only
            ("other", "z", 1, 1),                        # not a yardstick benchmark: ignored
        ]
    )
    figures = score_against_intent(labels, owner, intent, covered={"43-4051.00"}, split={"code": "tune", "desk": "holdout"})
    got = {(f["subset"], f["benchmark"], f["metric"]): f["value"] for f in figures}
    assert got[("tune", "code", "top1_plausible")] == pytest.approx(1 / 3)
    assert got[("tune", "code", "any_plausible")] == pytest.approx(2 / 3)
    assert got[("tune", "code", "primary_covered")] == 0.0
    assert got[("holdout", "desk", "top1_plausible")] == 0.0
    assert got[("holdout", "desk", "any_plausible")] == 1.0
    assert got[("holdout", "desk", "primary_covered")] == 1.0
    # The mean over benchmarks, not over prompts: each benchmark counts once.
    assert got[("all", "all", "top1_plausible")] == pytest.approx((1 / 3 + 0.0) / 2)
    assert got[("all", "all", "primary_covered")] == 0.5
    assert got[("tune", "all", "any_plausible")] == pytest.approx(2 / 3)
    n = {(f["subset"], f["benchmark"], f["metric"]): f["n_prompts"] for f in figures}
    assert n[("tune", "code", "top1_plausible")] == 3 and n[("all", "all", "top1_plausible")] == 4


def test_a_yardstick_benchmark_outside_the_committed_split_is_refused():
    intent = pd.DataFrame([("new", "", "15-1252.00", {"15-1252.00"})], columns=["benchmark", "work", "primary", "plausible"])
    with pytest.raises(ValueError, match=r"\['new'\] of the intent yardstick are not in the committed intent split"):
        score_against_intent(_labels([("new", "p", 1, 1)]), {1: "15-1252.00"}, intent, set(), {})


def test_covered_counts_distinct_prompts_per_task_against_the_threshold():
    owner = {1: "A", 2: "B"}
    labels = _labels([("x", "p1", 1, 1), ("x", "p2", 1, 1), ("y", "p1", 1, 1), ("x", "p1", 2, 2), ("x", "p1", 2, 2)])
    assert covered_occupations(labels, owner, 3) == {"A"}
    assert covered_occupations(labels, owner, 1) == {"A", "B"}
    assert covered_occupations(labels, owner, 4) == set()
    # The validation step counts per benchmark file and sums (it does not read every label): the same sets.
    per_file = labels.drop_duplicates(["benchmark", "prompt_id", "task_id"]).groupby(["benchmark", "task_id"]).size().rename("n_prompts").reset_index()
    for threshold in (1, 2, 3, 4):
        assert occupations_with_coverage(per_file, owner, threshold) == covered_occupations(labels, owner, threshold)
    assert occupations_with_coverage(per_file, owner, 3) == {"A"}  # 2 prompts of x and 1 of y: summed over the files


def test_a_record_without_its_primary_is_refused_by_line(tmp_path: Path):
    path = tmp_path / "benchmark_intent.jsonl"
    path.write_text(json.dumps({"benchmark": "a", "primary": "1", "plausible": []}) + "\n" + json.dumps({"benchmark": "b", "plausible": []}) + "\n")
    with pytest.raises(ValueError, match=r"benchmark_intent.jsonl:2: missing field 'primary'"):
        read_intent(path)
