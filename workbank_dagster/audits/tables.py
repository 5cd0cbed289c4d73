"""A user's own audit: their tasks (O*NET IDs or free text), optional desire and capability ratings,
met with benchmark coverage (docs/method.md §7 applied to an organisation's task list)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..analysis.zones import zone
from ..sources.validate import SourceFormatError, read_delimited, require_columns, to_float, to_int, to_text

AUDIT_COLUMNS = ["audit", "row", "task_id", "input_task", "matched_by", "match_score", "onet_task", "onet_soc_code", "desire", "capability", "zone", "n_prompts", "covered", "unbenchmarked"]


def read_audit(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    if "task_id" not in raw.columns and "task" not in raw.columns:
        require_columns(raw, path, ["task_id", "task"])
    for column in ("task_id", "task", "desire", "capability"):
        if column not in raw.columns:
            raw[column] = ""
    frame = pd.DataFrame(
        {
            "row": range(2, len(raw) + 2),
            "task_id": to_int(raw, "task_id", path, nullable=True),
            "input_task": to_text(raw, "task", path, nullable=True),
            "desire": to_float(raw, "desire", path, nullable=True, low=1.0, high=5.0),
            "capability": to_float(raw, "capability", path, nullable=True, low=1.0, high=5.0),
        }
    )
    missing = frame["task_id"].isna() & frame["input_task"].isna()
    if missing.any():
        line = int(frame.loc[missing, "row"].iloc[0])
        raise SourceFormatError(path, "row has neither a task_id nor a task", line=line, column="task", expected="an O*NET task ID or a task description")
    return frame


def audit_table(audit: str, frame: pd.DataFrame, matches: pd.DataFrame, tasks: pd.DataFrame, path: Path) -> pd.DataFrame:
    """`matches`: row, task_id, match_score for free-text rows. `tasks`: task_id, task, onet_soc_code, n_prompts, covered."""
    out = frame.copy()
    out["matched_by"] = out["task_id"].notna().map({True: "task_id", False: "embedded judge"})
    by_row = matches.set_index("row") if len(matches) else pd.DataFrame(columns=["task_id", "match_score"])
    out["match_score"] = out["row"].map(by_row["match_score"]) if len(matches) else pd.NA
    out["task_id"] = out["task_id"].fillna(out["row"].map(by_row["task_id"]) if len(matches) else pd.NA).astype("Int64")
    known = set(tasks["task_id"].astype(int))
    unknown = out[out["task_id"].notna() & ~out["task_id"].isin(known)]
    if len(unknown):
        raise SourceFormatError(path, "not an O*NET 29.3 task ID", line=int(unknown["row"].iloc[0]), column="task_id", found=int(unknown["task_id"].iloc[0]))
    info = tasks.set_index("task_id")
    out["onet_task"] = out["task_id"].map(info["task"])
    out["onet_soc_code"] = out["task_id"].map(info["onet_soc_code"])
    out["n_prompts"] = out["task_id"].map(info["n_prompts"]).fillna(0).astype("int64")
    out["covered"] = out["task_id"].map(info["covered"]).fillna(False).astype(bool)
    out["zone"] = [zone(d, c) for d, c in zip(out["desire"], out["capability"])]
    out["unbenchmarked"] = ~out["covered"]
    out["audit"] = audit
    return out[AUDIT_COLUMNS]
