"""WORKBank (Shao et al. 2025): worker automation desires, expert capability ratings, task metadata.

Exact duplicate rows are dropped and counted (the expert file repeats 19 rows, docs/method.md §2).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .validate import (
    ONET_SOC_PATTERN,
    SourceFormatError,
    _line,
    check_unique,
    read_delimited,
    require_columns,
    to_choice,
    to_float,
    to_int,
    to_text,
)

WORKER_DESIRES = "workbank/domain_worker_desires.csv"
EXPERT_RATINGS = "workbank/expert_rated_technological_capability.csv"
TASK_METADATA = "workbank/task_statement_with_metadata.csv"

_LIKERT = {"low": 1.0, "high": 5.0}


def _drop_exact_duplicates(raw: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    duplicated = raw.duplicated(keep="first")
    return raw[~duplicated], int(duplicated.sum())


def read_worker_desires(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    require_columns(
        raw,
        path,
        ["Task ID", "Occupation (O*NET-SOC Title)", "Task", "User ID", "Date", "Self-reported Expertise", "Automation Desire Rating", "Human Agency Scale Rating"],
    )
    raw, n_duplicates = _drop_exact_duplicates(raw)
    frame = pd.DataFrame(
        {
            "task_id": to_int(raw, "Task ID", path),
            "occupation_title": to_text(raw, "Occupation (O*NET-SOC Title)", path),
            "task": to_text(raw, "Task", path),
            "user_id": to_text(raw, "User ID", path),
            "response_date": to_text(raw, "Date", path),
            "self_reported_expertise": to_choice(raw, "Self-reported Expertise", path, ["Novice", "Average", "Expert"], nullable=True),
            "automation_desire": to_float(raw, "Automation Desire Rating", path, **_LIKERT),
            "human_agency_scale": to_int(raw, "Human Agency Scale Rating", path),
        }
    )
    _check_scale(frame, raw, path)
    frame.attrs["exact_duplicates_dropped"] = n_duplicates
    return frame


def read_expert_ratings(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["Task ID", "Occupation (O*NET-SOC Title)", "Task", "User ID", "Date", "Automation Capacity Rating", "Human Agency Scale Rating"])
    raw, n_duplicates = _drop_exact_duplicates(raw)
    frame = pd.DataFrame(
        {
            "task_id": to_int(raw, "Task ID", path),
            "occupation_title": to_text(raw, "Occupation (O*NET-SOC Title)", path),
            "task": to_text(raw, "Task", path),
            "user_id": to_text(raw, "User ID", path),
            "response_date": to_text(raw, "Date", path),
            "automation_capacity": to_float(raw, "Automation Capacity Rating", path, **_LIKERT),
            "human_agency_scale": to_int(raw, "Human Agency Scale Rating", path),
        }
    )
    _check_scale(frame, raw, path)
    frame.attrs["exact_duplicates_dropped"] = n_duplicates
    return frame


def read_task_metadata(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["O*NET-SOC Code", "Occupation (O*NET-SOC Title)", "Task ID", "Task", "Task Type", "Importance"])
    raw, n_duplicates = _drop_exact_duplicates(raw)
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "occupation_title": to_text(raw, "Occupation (O*NET-SOC Title)", path),
            "task_id": to_int(raw, "Task ID", path),
            "task": to_text(raw, "Task", path),
            "task_type": to_choice(raw, "Task Type", path, ["Core", "Supplemental"], nullable=True),
            "importance": to_float(raw, "Importance", path, nullable=True, **_LIKERT),
        }
    )
    check_unique(frame, ["task_id"], path, source=raw)
    frame.attrs["exact_duplicates_dropped"] = n_duplicates
    return frame


def _check_scale(frame: pd.DataFrame, raw: pd.DataFrame, path: Path) -> None:
    bad = ~frame["human_agency_scale"].between(1, 5)
    if bad.any():
        position = int(bad.to_numpy().nonzero()[0][0])
        raise SourceFormatError(
            path,
            "Human Agency Scale level out of range",
            line=_line(raw, position),
            column="Human Agency Scale Rating",
            expected="a level 1-5 (H1-H5)",
            found=frame["human_agency_scale"].iloc[position],
        )
