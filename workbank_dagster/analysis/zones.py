"""The WORKBank audit (docs/method.md §2, §7): desire–capability zones, Human Agency Scale modes, and
where the zones meet benchmark coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd

ZONES = ["Green Light", "Red Light", "R&D Opportunity", "Low Priority"]
ZONE_CUT = 3.0


def zone(desire: float, capability: float) -> str | None:
    """Zone at 3.0 on both axes, as in the WORKBank analysis code; None if either side is missing."""
    if desire is None or capability is None or pd.isna(desire) or pd.isna(capability):
        return None
    if capability >= ZONE_CUT:
        return "Green Light" if desire >= ZONE_CUT else "Red Light"
    return "R&D Opportunity" if desire >= ZONE_CUT else "Low Priority"


def modal_level(levels: pd.Series) -> tuple[int, bool]:
    """Modal Human Agency Scale level (1-5). Ties go to the level nearest the mean rating, then to the
    lower level. Returns (level, was_tied)."""
    counts = levels.value_counts()
    best = counts[counts == counts.max()].index.to_numpy()
    if len(best) == 1:
        return int(best[0]), False
    mean = levels.mean()
    order = sorted(best, key=lambda level: (abs(level - mean), level))
    return int(order[0]), True


def task_zones(workers: pd.DataFrame, experts: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Per task: mean desire, mean capability, zone, counts, modal HAS levels. Tasks rated by one side
    only keep NULLs on the other. Returns the table and the number of modal ties per side."""
    w = workers.groupby("task_id").agg(mean_desire=("automation_desire", "mean"), n_workers=("automation_desire", "size"))
    e = experts.groupby("task_id").agg(mean_capability=("automation_capacity", "mean"), n_experts=("automation_capacity", "size"))
    ties = {"worker": 0, "expert": 0}
    modes = {}
    for side, frame in (("worker", workers), ("expert", experts)):
        values = {}
        for task_id, group in frame.groupby("task_id"):
            level, tied = modal_level(group["human_agency_scale"].astype(int))
            values[task_id] = level
            ties[side] += tied
        modes[side] = pd.Series(values, name=f"modal_has_{side}")
    out = w.join(e, how="outer").join(modes["worker"]).join(modes["expert"]).reset_index().rename(columns={"index": "task_id"})
    out["zone"] = [zone(d, c) for d, c in zip(out["mean_desire"], out["mean_capability"])]
    for column in ("n_workers", "n_experts", "modal_has_worker", "modal_has_expert"):
        out[column] = out[column].astype("Int64")
    return out, ties


def agency_table(zones: pd.DataFrame) -> pd.DataFrame:
    """Worker (rows) vs expert (columns) modal Human Agency Scale: task counts in a 5x5 table."""
    both = zones.dropna(subset=["modal_has_worker", "modal_has_expert"])
    table = pd.crosstab(both["modal_has_worker"].astype(int), both["modal_has_expert"].astype(int)).reindex(index=range(1, 6), columns=range(1, 6), fill_value=0)
    table.index = [f"H{i}" for i in table.index]
    table.columns = [f"H{i}" for i in table.columns]
    return table.rename_axis("worker").reset_index()


def coverage_by_zone(zones: pd.DataFrame) -> pd.DataFrame:
    """`zones` with covered (bool) and hours: tasks, covered tasks, share, hours per zone."""
    rated = zones.dropna(subset=["zone"])
    out = (
        rated.groupby("zone")
        .agg(n_tasks=("task_id", "size"), n_covered=("covered", "sum"), hours=("hours", "sum"))
        .reindex(ZONES, fill_value=0)
        .reset_index()
    )
    out["share_covered"] = np.where(out["n_tasks"] > 0, out["n_covered"] / out["n_tasks"].where(out["n_tasks"] > 0, 1), np.nan)
    return out


def unbenchmarked_green_light(zones: pd.DataFrame) -> pd.DataFrame:
    """Green Light tasks (workers want them automated, experts rate agents capable) that no benchmark
    covers, ranked by US work hours."""
    green = zones[(zones["zone"] == "Green Light") & (~zones["covered"].astype(bool))]
    return green.sort_values(["hours", "task_id"], ascending=[False, True]).reset_index(drop=True)
