"""Hatgis-Kessell et al. (2026) hours per day per (occupation, task), O*NET 30.2 IDs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .validate import ONET_SOC_PATTERN, check_unique, read_xlsx, require_columns, to_float, to_int, to_text

TIME_SHARES = "timeshare/task_time_share_estimates.xlsx"
HOURS_COLUMN = "Time spent per day estimate (w(t,o) · E[f(t,o)])"
INSTANCE_COLUMN = "Time per single instance (w(t,o))"
FREQUENCY_COLUMN = "Expected daily frequency (E[f(t,o)])"


def read_time_shares(path: Path) -> pd.DataFrame:
    raw = read_xlsx(path, sheet=0)
    require_columns(raw, path, ["Task ID", "Task Name", "Occupation ID", "Occupation Name", HOURS_COLUMN])
    frame = pd.DataFrame(
        {
            "task_id": to_int(raw, "Task ID", path),
            "task": to_text(raw, "Task Name", path),
            "onet_soc_code": to_text(raw, "Occupation ID", path, pattern=ONET_SOC_PATTERN),
            "occupation_title": to_text(raw, "Occupation Name", path),
            "hours_per_day": to_float(raw, HOURS_COLUMN, path, low=0.0, high=24.0),
            "hours_per_instance": to_float(raw, INSTANCE_COLUMN, path, nullable=True, low=0.0)
            if INSTANCE_COLUMN in raw.columns
            else pd.array([pd.NA] * len(raw), dtype="Float64"),
            "daily_frequency": to_float(raw, FREQUENCY_COLUMN, path, nullable=True, low=0.0)
            if FREQUENCY_COLUMN in raw.columns
            else pd.array([pd.NA] * len(raw), dtype="Float64"),
        }
    )
    check_unique(frame, ["onet_soc_code", "task_id"], path, source=raw)
    return frame
