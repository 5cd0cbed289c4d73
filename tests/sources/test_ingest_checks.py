"""Checks that our parsers reproduce numbers the sources publish."""

from __future__ import annotations

import numpy as np
import pytest

from workbank_dagster.sources import exposure, workbank


def test_eloundou_occupation_scores_reproduced_from_task_labels(source_dir):
    tasks = exposure.read_full_labelset(source_dir / exposure.FULL_LABELSET)
    published = exposure.read_occ_level(source_dir / exposure.OCC_LEVEL).set_index("onet_soc_code")
    # The labelset's own task types: Core weighs 2, Supplemental and blank 1 (exposure/SOURCES.md).
    weight = np.where(tasks["task_type"].fillna("") == "Core", 2.0, 1.0)
    for rater, prefix in (("human_exposure", "human_rating"), ("gpt4_exposure", "dv_rating")):
        label = tasks[rater].to_numpy()
        scores = {"alpha": (label == "E1") * 1.0, "beta": (label == "E1") + 0.5 * (label == "E2"), "gamma": (label != "E0") * 1.0}
        for name, score in scores.items():
            frame = tasks.assign(w=weight, ws=weight * score)
            means = frame.groupby("onet_soc_code")["ws"].sum() / frame.groupby("onet_soc_code")["w"].sum()
            column = published[f"{prefix}_{name}"].astype(float)
            assert set(means.index) == set(column.index)
            assert np.max(np.abs(means.reindex(column.index).to_numpy() - column.to_numpy())) < 1e-12, (prefix, name)


def test_workbank_share_of_tasks_workers_want_automated(source_dir):
    workers = workbank.read_worker_desires(source_dir / workbank.WORKER_DESIRES)
    means = workers.groupby("task_id")["automation_desire"].mean()
    assert len(means) == 844
    # The paper reports 46.1% of tasks with mean automation desire above 3.
    assert (means > 3).mean() == pytest.approx(0.461, abs=0.0005)
