"""The coverage history (one row per headline materialization, from the Dagster instance) and each
benchmark's contribution (what coverage loses without it)."""

from __future__ import annotations

import dagster as dg
import duckdb
import pandas as pd
import pytest

from workbank_dagster.analysis.assets import HEADLINE_KEY, coverage_history, headline_records
from workbank_dagster.analysis.columns import BENCHMARK_VERSIONS_METADATA, HEADLINE_NUMBERS_METADATA
from workbank_dagster.analysis.coverage import BenchmarkCounts
from workbank_dagster.analysis.history import (
    HISTORY_CONTRACT,
    ContractError,
    benchmark_contributions,
    enforce_contract,
    history_table,
)
from workbank_dagster.resources import Warehouse


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


def _report(instance: dg.DagsterInstance) -> None:
    for versions, numbers in REFRESHES:
        metadata = {HEADLINE_NUMBERS_METADATA: dg.MetadataValue.json(numbers), BENCHMARK_VERSIONS_METADATA: dg.MetadataValue.json(versions)}
        instance.report_runless_asset_event(dg.AssetMaterialization(HEADLINE_KEY, metadata=metadata))


def test_add_change_remove_give_a_row_each_with_what_moved(tmp_path):
    """Real materialization records of the headline, read back by the history asset."""
    instance = dg.DagsterInstance.ephemeral()
    _report(instance)
    db = tmp_path / "w.duckdb"
    assert dg.materialize([coverage_history], instance=instance, resources={"warehouse_db": Warehouse(db)}).success
    with duckdb.connect(str(db), read_only=True) as con:
        table = con.execute("select * from analysis.coverage_history order by refresh").df()
    assert list(table["refresh"]) == [1, 2, 3, 4]
    assert list(table["benchmarks_added"].fillna("-")) == ["alpha", "beta", "-", "-"]
    assert list(table["benchmarks_changed"].fillna("-")) == ["-", "-", "beta", "-"]
    assert list(table["benchmarks_removed"].fillna("-")) == ["-", "-", "-", "beta"]
    assert table["change_work_time_share_uncovered"].iloc[1:].round(6).tolist() == [-0.05, 0.01, 0.04]
    assert table["change_n_tasks_covered"].iloc[1:].tolist() == [6, -1, -5]
    assert table["change_exposure_coverage_ratio"].iloc[1:].round(6).tolist() == [0.5, -0.1, -0.4]
    assert pd.isna(table["change_n_tasks_covered"].iloc[0])  # nothing before the first
    assert table["n_families_covered"].tolist() == [2, 2, 2, 2]
    assert table["materialized_at"].is_monotonic_increasing and table["run_id"].notna().all()
    assert table["moved"].tolist() == [True, True, True, True]


def test_a_rebuilt_warehouse_gets_the_history_back_from_the_instance(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    _report(instance)
    for name in ("first.duckdb", "second.duckdb"):  # a warehouse deleted and built again: the same rows
        assert dg.materialize([coverage_history], instance=instance, resources={"warehouse_db": Warehouse(tmp_path / name)}).success
    frames = []
    for name in ("first.duckdb", "second.duckdb"):
        with duckdb.connect(str(tmp_path / name), read_only=True) as con:
            frames.append(con.execute("select * exclude (materialized_at) from analysis.coverage_history order by refresh").df())
    pd.testing.assert_frame_equal(*frames)
    assert len(headline_records(instance)) == 4


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
