"""O*NET 29.3: task statements, occupations, task importance (IM), Dingel–Neiman teleworkability."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .validate import (
    ONET_SOC_PATTERN,
    SOC_PATTERN,
    check_row_count,
    check_unique,
    read_delimited,
    require_columns,
    to_choice,
    to_float,
    to_int,
    to_text,
)

TASK_STATEMENTS = "onet/task_statements_29_3.tsv"
OCCUPATIONS = "onet/occupation_data_29_3.tsv"
IMPORTANCE = "onet/task_ratings_IM_only_db_29.csv"
TELEWORK = "onet/dingel_neiman/occupations_workathome.csv"


def read_task_statements(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, "\t")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Task ID", "Task", "Task Type", "Incumbents Responding", "Date", "Domain Source"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "task_id": to_int(raw, "Task ID", path),
            "task": to_text(raw, "Task", path),
            # Analyst-written tasks have no type in the Excel edition: NULL, never a guess.
            "task_type": to_choice(raw, "Task Type", path, ["Core", "Supplemental"], nullable=True),
            "incumbents_responding": to_int(raw, "Incumbents Responding", path, nullable=True),
            "rating_date": to_text(raw, "Date", path, nullable=True),
            "domain_source": to_text(raw, "Domain Source", path),
        }
    )
    check_unique(frame, ["task_id"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="tasks")
    return frame


def read_occupations(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, "\t")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Description"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "description": to_text(raw, "Description", path, nullable=True),
        }
    )
    check_unique(frame, ["onet_soc_code"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="occupations")
    return frame


def read_importance(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["O*NET-SOC Code", "Task ID", "Scale ID", "Data Value", "N", "Date", "Domain Source"])
    to_choice(raw, "Scale ID", path, ["IM"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "task_id": to_int(raw, "Task ID", path),
            "importance": to_float(raw, "Data Value", path, low=1.0, high=5.0),
            "n_respondents": to_int(raw, "N", path, nullable=True),
            "rating_date": to_text(raw, "Date", path, nullable=True),
            "domain_source": to_text(raw, "Domain Source", path),
        }
    )
    check_unique(frame, ["onet_soc_code", "task_id"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="ratings")
    return frame


def read_telework(path: Path) -> pd.DataFrame:
    """Dingel & Neiman (2020) teleworkability by O*NET-SOC code (O*NET-SOC 2010 taxonomy)."""
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["onetsoccode", "title", "teleworkable"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "onetsoccode", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "title", path),
            "teleworkable": to_float(raw, "teleworkable", path, low=0.0, high=1.0),
        }
    )
    check_unique(frame, ["onet_soc_code"], path, source=raw)
    return frame


__all__ = ["read_task_statements", "read_occupations", "read_importance", "read_telework", "SOC_PATTERN"]
