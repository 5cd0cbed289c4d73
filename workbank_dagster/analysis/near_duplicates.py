"""The same work listed in several occupations (#38): how a label on one of near-identical task
statements is counted.

O*NET often lists one piece of work in several occupations, in the same words ("Evaluate and grade
students' class work…" in some 40 postsecondary teachers) or nearly so ("Wash and sterilize
equipment, using germicides and sterilizers" / "Disinfect or sterilize equipment or supplies, using
germicides or sterilizers"). A judge that labels at most three tasks picks one of them, and the
others stay at 0 prompts. Three ways to count such a label, each a row of the sensitivity table
(analysis/coverage.py) and measured on the yardsticks (bench/judge_variants.py):

- `separate` (c, as before): a label counts for its own task only;
- `together` (a): a label counts for its task and every near-identical twin of it in another
  occupation, so it covers that work wherever O*NET lists it (labels per prompt grow accordingly);
- `by_evidence` (b): a label moves to its twin in the occupation of the prompt's rank-1 label, when
  it has one there: the choice between twins follows the occupation the judge found best.

Twins (`labeling/task_twins`, marts.dim_task_twins) are pairs of task statements of different
occupations whose embeddings have a cosine of at least NEAR_IDENTICAL (identical statements
included); the pairs are symmetric.
"""

from __future__ import annotations

import pandas as pd

from .coverage import prompts_per_task

MODES = ("separate", "together", "by_evidence")


def labels_with_twins(labels: pd.DataFrame, twins: pd.DataFrame, mode: str, task_occupation: dict[int, str]) -> pd.DataFrame:
    """`labels` (benchmark, prompt_id, task_id, rank, …) counted under `mode`; `twins`: task_id,
    twin_task_id (both directions). Ranks are kept (a twin added by `together` takes its label's
    rank); a task a prompt would get twice is kept once, at its best rank."""
    if mode not in MODES:
        raise ValueError(f"unknown near-duplicate mode {mode!r}: expected one of {', '.join(MODES)}")
    if mode == "separate" or labels.empty or twins.empty:
        return labels
    keys = ["benchmark", "prompt_id"]
    pairs = twins[["task_id", "twin_task_id"]].astype("int64")
    frame = labels.assign(task_id=labels["task_id"].astype("int64"))
    if mode == "together":
        added = frame.merge(pairs, on="task_id").drop(columns="task_id").rename(columns={"twin_task_id": "task_id"})
        out = pd.concat([frame, added[frame.columns]], ignore_index=True)
    else:
        top = frame.sort_values([*keys, "rank"]).drop_duplicates(keys)[[*keys, "task_id"]]
        top = top.assign(top_occupation=top["task_id"].map(task_occupation)).drop(columns="task_id")
        moved = frame.merge(top, on=keys).merge(pairs, on="task_id", how="left")
        # A dict lookup of the whole column (a float one: no twin is NaN, which finds no occupation),
        # not a function a row: the same occupations, at a million prompts some 2.8 million rows.
        moved["twin_occupation"] = moved["twin_task_id"].map(task_occupation)
        moved["own_occupation"] = moved["task_id"].map(task_occupation)
        hit = (moved["twin_occupation"] == moved["top_occupation"]) & (moved["own_occupation"] != moved["top_occupation"])
        # One row per label: its twin in the top occupation where there is one (the smallest such id), else itself.
        chosen = moved[hit].sort_values("twin_task_id").drop_duplicates([*keys, "task_id"])[[*keys, "task_id", "twin_task_id"]]
        out = frame.merge(chosen, on=[*keys, "task_id"], how="left")
        out["task_id"] = out["twin_task_id"].fillna(out["task_id"]).astype("int64")
        out = out.drop(columns="twin_task_id")[frame.columns]
    out = out.sort_values([*keys, "rank", "task_id"]).drop_duplicates([*keys, "task_id"]).reset_index(drop=True)
    return out.astype({"task_id": labels["task_id"].dtype})


def near_duplicate_counts(labels: pd.DataFrame, twins: pd.DataFrame, tasks: pd.DataFrame) -> dict[str, pd.Series]:
    """Per mode, distinct prompts per task (task_id -> n) of one labeler's `labels` (benchmark,
    prompt_id, task_id, rank) counted that way: the rows `near_duplicates:<mode>` of the
    sensitivity table. `tasks`: task_id, onet_soc_code."""
    owner = dict(zip(tasks["task_id"].astype(int), tasks["onet_soc_code"]))
    out = {}
    for mode in MODES:
        out[mode] = prompts_per_task(labels_with_twins(labels, twins, mode, owner))
    return out
