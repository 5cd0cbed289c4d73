"""The judges never read what the analysis regresses coverage on (#19).

Task importance, AI exposure, wages and employment, work-time shares and telework are the variables
whose effect on coverage the analysis estimates. A judge that read them would manufacture the very
effects being measured. This test loads them beside the O*NET tables, labels a benchmark with the
embedded judges' asset, shuffles every one of those columns across rows, labels it again from
scratch, and finds every label and judgement row unchanged.
"""

from __future__ import annotations

import shutil

import dagster as dg
import pytest
from conftest import small_source_dir
from partition_tables import partition_tables

from workbank_dagster import warehouse
from workbank_dagster.labeling.judge_assets import embedded_judge_labels
from workbank_dagster.labeling.matching import LabelingRuntime
from workbank_dagster.labeling.onet_assets import task_index
from workbank_dagster.resources import Warehouse
from workbank_dagster.settings import PipelineSettings
from workbank_dagster.sources.assets import file_assets, raw_assets
from workbank_dagster.sources.benchmark_assets import benchmark_instructions, benchmark_prompts

PARTITION = "cybench"  # 39 prompts
# raw table → the columns the analysis regresses on, or weights by (docs/method.md).
REGRESSORS = {
    "onet_task_importance": ["importance"],
    "workbank_task_metadata": ["importance"],
    "eloundou_task_exposure": ["human_exposure", "gpt4_exposure"],
    "eloundou_occupation_exposure": ["dv_rating_alpha", "dv_rating_beta", "dv_rating_gamma", "human_rating_alpha", "human_rating_beta", "human_rating_gamma"],
    "oews_national": ["tot_emp", "h_mean", "a_mean", "h_median", "a_median"],
    "task_time_shares": ["hours_per_day", "hours_per_instance", "daily_frequency"],
    "onet_telework": ["teleworkable"],
}


def _shuffle(con, table: str, columns: list[str]) -> None:
    """Each column's values permuted across rows (a fixed permutation, another per column)."""
    for i, column in enumerate(columns):
        con.execute(
            f"""
            create or replace temp table moved as
            with rows as (select rowid as r, row_number() over (order by rowid) as n from raw.{table}),
                 dealt as (select {column} as v, row_number() over (order by hash(rowid + {i + 1}), rowid) as n from raw.{table})
            select rows.r, dealt.v from rows join dealt using (n)
            """
        )
        con.execute(f"update raw.{table} set {column} = moved.v from moved where raw.{table}.rowid = moved.r")


def _rows(db) -> dict:
    with partition_tables(db.parent / "partitions") as con:
        return {
            table: con.execute(f"select * from labeling.{table} order by all").df()
            for table in ("embedded_labels", "embedded_judgements")
        }


@pytest.fixture()
def labeling_env(workbank_env, tmp_path, reduced_source_dir, monkeypatch, onet_base):
    sources = small_source_dir(tmp_path, reduced_source_dir, (PARTITION,))
    monkeypatch.setenv("WORKBANK_SOURCE_DIR", str(sources))
    shutil.copytree(onet_base, workbank_env)  # the O*NET tables, the task index and the prior
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", [PARTITION])
    resources = {"warehouse_db": Warehouse(workbank_env / "warehouse.duckdb"), "labeling_runtime": LabelingRuntime(), "pipeline_settings": PipelineSettings.from_env()}
    # The prompts and the benchmark's instruction text (v7 reads it).
    assert dg.materialize([benchmark_prompts, benchmark_instructions], instance=instance, resources=resources, partition_key=PARTITION).success
    needed = [dg.AssetKey([layer, table]) for layer in ("files", "raw") for table in REGRESSORS]
    assert dg.materialize([*file_assets, *raw_assets], instance=instance, resources=resources, selection=needed).success
    return {"db": workbank_env / "warehouse.duckdb", "instance": instance, "resources": resources}


def _label(env) -> dg.ExecuteInJobResult:
    result = dg.materialize([embedded_judge_labels], instance=env["instance"], resources=env["resources"], partition_key=PARTITION)
    assert result.success
    return result


def test_shuffling_what_the_analysis_regresses_on_leaves_every_label_unchanged(labeling_env):
    db = labeling_env["db"]
    _label(labeling_env)
    before = _rows(db)
    assert len(before["embedded_labels"]) > 0 and set(before["embedded_labels"]["labeler"].str.rsplit(":", n=1).str[-1]) == {"v3", "v7"}
    with warehouse.connect(db) as con:
        original = {t: con.execute(f"select {', '.join(c)} from raw.{t} order by rowid").df() for t, c in REGRESSORS.items()}
        for table, columns in REGRESSORS.items():
            _shuffle(con, table, columns)
        shuffled = {t: con.execute(f"select {', '.join(c)} from raw.{t} order by rowid").df() for t, c in REGRESSORS.items()}
    for table in REGRESSORS:
        assert not original[table].equals(shuffled[table]), f"raw.{table} was not shuffled"
    # Label again from scratch: a fresh Dagster instance holds no record of what the labels were
    # made from (their materializations' inputs_sha256), so the asset cannot keep them. The task
    # index step writes the O*NET files the labels read again, from the shuffled warehouse.
    fresh = dg.DagsterInstance.ephemeral()
    fresh.add_dynamic_partitions("benchmarks", [PARTITION])
    assert dg.materialize([task_index], instance=fresh, resources=labeling_env["resources"]).success
    again = _label({**labeling_env, "instance": fresh})
    labels_key = dg.AssetKey(["labeling", "embedded_labels"])
    metadata = next(e for e in again.asset_materializations_for_node("embedded_judge_labels") if e.asset_key == labels_key).metadata
    assert len(metadata["recomputed"].value) == 1  # labeled again, not kept
    after = _rows(db)
    for table, frame in before.items():
        assert frame.equals(after[table]), table
