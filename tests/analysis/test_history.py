"""The coverage history (one row per refresh of the headline, appended to the warehouse by its
step) and each benchmark's contribution (what coverage loses without it)."""

from __future__ import annotations

import time

import dagster as dg
import duckdb
import pandas as pd
import pytest

from workbank_dagster import warehouse
from workbank_dagster.analysis.columns import BENCHMARK_VERSIONS_METADATA, HEADLINE_NUMBERS_METADATA
from workbank_dagster.analysis.coverage import BenchmarkCounts
from workbank_dagster.analysis.history import (
    HISTORY_CONTRACT,
    ContractError,
    benchmark_contributions,
    enforce_contract,
    history_frame,
    history_table,
)
from workbank_dagster.migrate import HEADLINE_KEY, migrate
from workbank_dagster.report.assets import append_refresh


def _numbers(uncovered: float, tasks: int, exposure: float, importance: float, benchmarks: int) -> dict:
    return {
        "labeler": "embedded:all-MiniLM-L6-v2:v4", "n_benchmarks": benchmarks, "n_prompts": 10 * benchmarks, "n_tasks_covered": tasks,
        "n_occupations_with_covered_task": tasks // 2, "n_families": 22, "n_families_without_covered_occupation": 20,
        "work_time_share_uncovered": uncovered, "exposure_coverage_ratio": exposure, "importance_top_bottom_ratio": importance,
    }


# A base refresh, then the three refreshes: add a benchmark, change it, remove it.
REFRESHES = [
    ({"alpha": "a1"}, _numbers(0.95, 10, 2.0, 1.5, 1)),
    ({"alpha": "a1", "beta": "b1"}, _numbers(0.90, 16, 2.5, 1.7, 2)),
    ({"alpha": "a1", "beta": "b2"}, _numbers(0.91, 15, 2.4, 1.7, 2)),
    ({"alpha": "a1"}, _numbers(0.95, 10, 2.0, 1.5, 1)),
]


def _records() -> list[dict]:
    return [
        {"materialized_at": 1000.0 + i, "run_id": f"run{i}", "numbers": numbers, "benchmarks": versions}
        for i, (versions, numbers) in enumerate(REFRESHES)
    ]


def _history(db) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("select * from analysis.coverage_history order by refresh").df()


def _check_add_change_remove(table: pd.DataFrame) -> None:
    assert list(table["refresh"]) == [1, 2, 3, 4]
    assert list(table["benchmarks_added"].fillna("-")) == ["alpha", "beta", "-", "-"]
    assert list(table["benchmarks_changed"].fillna("-")) == ["-", "-", "beta", "-"]
    assert list(table["benchmarks_removed"].fillna("-")) == ["-", "-", "-", "beta"]
    assert table["change_work_time_share_uncovered"].iloc[1:].round(6).tolist() == [-0.05, 0.01, 0.04]
    assert table["change_n_tasks_covered"].iloc[1:].tolist() == [6, -1, -5]
    assert table["change_exposure_coverage_ratio"].iloc[1:].round(6).tolist() == [0.5, -0.1, -0.4]
    assert pd.isna(table["change_n_tasks_covered"].iloc[0])  # nothing before the first
    assert table["n_families_covered"].tolist() == [2, 2, 2, 2]
    assert table["materialized_at"].is_monotonic_increasing and table["run_id"].tolist() == ["run0", "run1", "run2", "run3"]
    assert table["moved"].tolist() == [True, True, True, True]


def test_each_refresh_appends_a_row_that_says_what_moved(tmp_path):
    """The headline step's append, one refresh at a time, against the row before it in the warehouse."""
    db = tmp_path / "w.duckdb"
    for record in _records():
        with warehouse.connect(db) as con:
            whole = append_refresh(con, record)
    _check_add_change_remove(_history(db))
    assert len(whole) == 4
    # One append gives what one fold over every record gives: the row is computed from the last row alone.
    pd.testing.assert_frame_equal(history_frame(_history(db).to_dict("records")), history_table(_records()))


def test_an_older_checkouts_history_is_brought_into_the_warehouse_by_the_migration(tmp_path):
    """Before, the history was rebuilt from the headline's materializations in the Dagster instance on
    every run (no benchmark_versions column). `cli migrate` rebuilds it once from there, versions
    included; the headline's appends then go on from it. Until then, the append says to migrate."""
    instance = dg.DagsterInstance.ephemeral()
    for versions, numbers in REFRESHES[:3]:
        metadata = {HEADLINE_NUMBERS_METADATA: dg.MetadataValue.json(numbers), BENCHMARK_VERSIONS_METADATA: dg.MetadataValue.json(versions)}
        instance.report_runless_asset_event(dg.AssetMaterialization(HEADLINE_KEY, metadata=metadata))
    db = tmp_path / "w.duckdb"
    old = history_table(_records()[:3]).drop(columns="benchmark_versions")
    with warehouse.connect(db) as con:
        warehouse.replace_table(con, "analysis", "coverage_history", old)
        with pytest.raises(ContractError, match="cli migrate"):
            append_refresh(con, _records()[3])
    assert migrate(db, instance) == ["rebuilt analysis.coverage_history from the instance's 3 headline materializations, with their benchmark versions"]
    assert migrate(db, instance) == []  # once
    with warehouse.connect(db) as con:
        append_refresh(con, {**_records()[3], "materialized_at": time.time()})
    table = _history(db)
    assert table["run_id"].iloc[:3].notna().all()
    _check_add_change_remove(table.assign(run_id=["run0", "run1", "run2", "run3"]))  # the instance's own run ids for the first three


def test_without_the_instance_the_migration_keeps_the_rows_and_the_next_refresh_says_unknown(tmp_path):
    db = tmp_path / "w.duckdb"
    with warehouse.connect(db) as con:
        warehouse.replace_table(con, "analysis", "coverage_history", history_table(_records()[:2]).drop(columns="benchmark_versions"))
    assert migrate(db, dg.DagsterInstance.ephemeral()) == [
        "added the empty column benchmark_versions to analysis.coverage_history (no headline materialization in the instance)"
    ]
    with warehouse.connect(db) as con:
        append_refresh(con, _records()[2])
    table = _history(db)
    assert table["refresh"].tolist() == [1, 2, 3]
    assert table["benchmarks_changed"].isna().tolist() == [True, True, True]  # the versions before are unknown
    assert table["change_n_tasks_covered"].iloc[2] == -1  # the numbers are still compared


def test_a_headline_recorded_before_versions_were_kept_says_unknown():
    rows = history_table([
        {"materialized_at": 1.0, "run_id": "r1", "numbers": _numbers(0.9, 1, 1.0, 1.0, 1), "benchmarks": None},
        {"materialized_at": 2.0, "run_id": "r2", "numbers": _numbers(0.9, 1, 1.0, 1.0, 1), "benchmarks": {"alpha": "a1"}},
        {"materialized_at": 3.0, "run_id": "r3", "numbers": _numbers(0.9, 1, 1.0, 1.0, 1), "benchmarks": {"alpha": "a1"}},
    ])
    assert rows["benchmarks_added"].isna().tolist() == [True, True, True]  # unknown twice, then nothing added
    assert rows["change_work_time_share_uncovered"].tolist()[1:] == [0.0, 0.0]
    assert rows["moved"].tolist() == [True, False, False]  # the same numbers, no benchmark changed: no move


def test_the_contract_is_checked():
    table = history_table([{"materialized_at": 1.0, "run_id": "r", "numbers": _numbers(0.9, 1, 1.0, 1.0, 1), "benchmarks": {"a": "1"}}])
    assert enforce_contract(table, HISTORY_CONTRACT, "t") is table
    assert list(history_table([]).dtypes.astype(str)) == list(HISTORY_CONTRACT.values())
    with pytest.raises(ContractError, match="column types"):
        enforce_contract(table.astype({"n_prompts": "float64"}), HISTORY_CONTRACT, "t")
    with pytest.raises(ContractError, match="columns"):
        enforce_contract(table.drop(columns="run_id"), HISTORY_CONTRACT, "t")


def test_a_benchmark_s_contribution_is_what_coverage_loses_without_it():
    tasks = pd.DataFrame(
        {"task_id": [1, 2, 3, 4], "onet_soc_code": ["A", "A", "B", "C"], "family_code": ["11", "11", "13", "15"], "hours": [10.0, 10.0, 30.0, 50.0]}
    )
    labels = pd.DataFrame(
        [("x", "p1", 1), ("y", "q1", 1), ("x", "p2", 3), ("y", "q2", 4), ("y", "q3", 2)], columns=["benchmark", "prompt_id", "task_id"]
    )
    labeled = labels.groupby("benchmark")["prompt_id"].nunique()
    frame = benchmark_contributions(BenchmarkCounts.from_labels(labels, tasks), labeled, tasks, ["11", "13", "15"], threshold=1).set_index("benchmark")
    # x alone covers task 3 (occupation B); y alone covers tasks 4 and 2 (occupation C; A keeps task 1 through x).
    assert frame.loc["x", "n_tasks_covered_only_with_it"] == 1 and frame.loc["x", "n_occupations_covered_only_with_it"] == 1
    assert frame.loc["y", "n_tasks_covered_only_with_it"] == 2 and frame.loc["y", "n_occupations_covered_only_with_it"] == 1
    assert frame.loc["x", "work_time_share_uncovered"] == 0.0
    assert frame.loc["x", "work_time_share_uncovered_without_it"] == pytest.approx(0.3)
    assert frame.loc["y", "change_without_it"] == pytest.approx(0.6)
    assert frame.loc["y", "n_prompts_labeled"] == 3
    assert benchmark_contributions(BenchmarkCounts.from_labels(labels.iloc[0:0], tasks), labeled.iloc[0:0], tasks, ["11"], threshold=1).empty
