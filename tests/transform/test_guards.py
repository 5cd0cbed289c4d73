"""Guards that turn a silent wrong result into a clear failure."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import copy_small_run, run_pipeline

from workbank_dagster.partition_files import PartitionFiles
from workbank_dagster.transform.assets import UnknownActiveLabeler, check_active_labeler


def _warehouse(tmp_path, judged: dict[str, int]) -> PartitionFiles:
    """One benchmark's prompt and its judgement files (partition_files.py), as the partition steps write them."""
    files = PartitionFiles(tmp_path / "partitions")
    files.write("benchmark_prompts", "b", pd.DataFrame({"benchmark": ["b"], "prompt_id": ["1"]}))
    labelers = [labeler for labeler, n in judged.items() for _ in range(n)]
    files.write("embedded_judgements", "b", pd.DataFrame({"benchmark": "b", "labeler": labelers, "status": "abstained"}))
    return files


def test_unknown_active_labeler_is_refused_with_the_labelers_found(tmp_path):
    db = _warehouse(tmp_path, {"embedded:all-MiniLM-L6-v2:v4": 3})
    with pytest.raises(UnknownActiveLabeler) as raised:
        check_active_labeler(db, "embedded:all-MiniLM-L6-v2:v9")
    assert "'embedded:all-MiniLM-L6-v2:v9'" in raised.value.description and "embedded:all-MiniLM-L6-v2:v4 (3 prompts)" in raised.value.description
    with pytest.raises(UnknownActiveLabeler, match="llm_labeling"):
        check_active_labeler(db, "llm:gpt-4o-mini:t2")  # its job never ran


def test_a_labeler_that_judged_and_labeled_nothing_is_not_an_error(tmp_path):
    check_active_labeler(_warehouse(tmp_path, {"embedded:all-MiniLM-L6-v2:v4": 3}), "embedded:all-MiniLM-L6-v2:v4")  # all abstained
    check_active_labeler(PartitionFiles(tmp_path / "empty"), "anything")  # no prompts yet


def test_a_run_with_an_unknown_active_labeler_fails_naming_it(tmp_path, small_base_run, session_cache):
    """Before the guard this run succeeded, with empty marts and every check green. (A copy of the
    session's small run: the guard is the dbt step's first act, after sources and labels.)"""
    _, env = copy_small_run(small_base_run, tmp_path, session_cache)
    completed = run_pipeline({**env, "WORKBANK_ACTIVE_LABELER": "embedded:all-MiniLM-L6-v2:v9"})
    assert completed.returncode != 0
    assert "the active labeler 'embedded:all-MiniLM-L6-v2:v9' (WORKBANK_ACTIVE_LABELER) has no judgement records" in completed.stdout + completed.stderr
