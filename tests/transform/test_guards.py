"""Guards that turn a silent wrong result into a clear failure."""

from __future__ import annotations

import pytest
from conftest import copy_small_run, run_pipeline

from workbank_dagster.resources import Warehouse
from workbank_dagster.transform.assets import UnknownActiveLabeler, check_active_labeler


def _warehouse(tmp_path, judged: dict[str, int]) -> Warehouse:
    db = Warehouse(tmp_path / "w.duckdb")
    with db.connect() as con:
        con.execute("create schema raw; create schema labeling")
        con.execute("create table raw.benchmark_prompts as select 'b' as benchmark, '1' as prompt_id")
        con.execute("create table labeling.embedded_judgements (labeler varchar, status varchar)")
        for labeler, n in judged.items():
            con.execute("insert into labeling.embedded_judgements select ?, 'abstained' from range(?)", [labeler, n])
    return db


def test_unknown_active_labeler_is_refused_with_the_labelers_found(tmp_path):
    db = _warehouse(tmp_path, {"embedded:all-MiniLM-L6-v2:v4": 3})
    with pytest.raises(UnknownActiveLabeler) as raised:
        check_active_labeler(db, "embedded:all-MiniLM-L6-v2:v9")
    assert "'embedded:all-MiniLM-L6-v2:v9'" in raised.value.description and "embedded:all-MiniLM-L6-v2:v4 (3 prompts)" in raised.value.description
    with pytest.raises(UnknownActiveLabeler, match="llm_labeling"):
        check_active_labeler(db, "llm:gpt-4o-mini:t2")  # its job never ran


def test_a_labeler_that_judged_and_labeled_nothing_is_not_an_error(tmp_path):
    check_active_labeler(_warehouse(tmp_path, {"embedded:all-MiniLM-L6-v2:v4": 3}), "embedded:all-MiniLM-L6-v2:v4")  # all abstained
    check_active_labeler(Warehouse(tmp_path / "empty.duckdb"), "anything")  # no prompts yet


def test_a_run_with_an_unknown_active_labeler_fails_naming_it(tmp_path, small_base_run, session_cache):
    """Before the guard this run succeeded, with empty marts and every check green. (A copy of the
    session's small run: the guard is the dbt step's first act, after sources and labels.)"""
    _, env = copy_small_run(small_base_run, tmp_path, session_cache)
    completed = run_pipeline({**env, "WORKBANK_ACTIVE_LABELER": "embedded:all-MiniLM-L6-v2:v9"})
    assert completed.returncode != 0
    assert "the active labeler 'embedded:all-MiniLM-L6-v2:v9' (WORKBANK_ACTIVE_LABELER) has no judgement records" in completed.stdout + completed.stderr
