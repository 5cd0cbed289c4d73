"""Eloundou et al. (2023) task-level exposure labels (O*NET 27.2 task IDs) and their occupation scores."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .validate import (
    ONET_SOC_PATTERN,
    check_unique,
    read_delimited,
    require_columns,
    to_choice,
    to_float,
    to_int,
    to_text,
)

FULL_LABELSET = "exposure/full_labelset.tsv"
OCC_LEVEL = "exposure/occ_level.csv"
EXPOSURE_LEVELS = ["E0", "E1", "E2"]


def read_full_labelset(path: Path) -> pd.DataFrame:
    # The first column is an unnamed pandas row index.
    raw = read_delimited(path, "\t", index_column_unnamed=True)
    require_columns(raw, path, ["O*NET-SOC Code", "Task ID", "Task", "Task Type", "Title", "human_exposure_agg", "gpt4_exposure"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            # Stored as a float ("8823.0"): cast to an integer ID.
            "task_id": to_int(raw, "Task ID", path),
            "task": to_text(raw, "Task", path),
            "task_type": to_choice(raw, "Task Type", path, ["Core", "Supplemental"], nullable=True),
            "title": to_text(raw, "Title", path),
            "human_exposure": to_choice(raw, "human_exposure_agg", path, EXPOSURE_LEVELS),
            "gpt4_exposure": to_choice(raw, "gpt4_exposure", path, EXPOSURE_LEVELS),
        }
    )
    check_unique(frame, ["task_id"], path, source=raw)
    return frame


def read_occ_level(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    columns = ["dv_rating_alpha", "dv_rating_beta", "dv_rating_gamma", "human_rating_alpha", "human_rating_beta", "human_rating_gamma"]
    require_columns(raw, path, ["O*NET-SOC Code", "Title", *columns])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            **{c: to_float(raw, c, path, low=0.0, high=1.0) for c in columns},
        }
    )
    check_unique(frame, ["onet_soc_code"], path, source=raw)
    return frame
