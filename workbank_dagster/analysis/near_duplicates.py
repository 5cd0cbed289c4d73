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

import numpy as np
import pandas as pd

from .coverage import prompts_per_task
from .keys import distinct_pairs, packed_pairs

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
    sensitivity table. `tasks`: task_id, onet_soc_code.

    The counts of `labels_with_twins`' labels, made from distinct (prompt, task) pairs as integers:
    the counts ask nothing of a label's rank but which task the rank-1 label is, and at a million
    prompts the frames (two sorts and a drop of duplicates a mode) took 4.0 s, these 1.7."""
    if labels.empty or twins.empty:
        counts = prompts_per_task(labels)
        return {mode: counts for mode in MODES}
    prompt = _prompt_codes(labels)
    task = labels["task_id"].to_numpy(dtype=np.int64)
    pairs = twins[["task_id", "twin_task_id"]].to_numpy(dtype=np.int64)
    row, twin = _twins_of(task, pairs)
    out = {"separate": _per_task(prompt, task), "together": _per_task(np.concatenate([prompt, prompt[row]]), np.concatenate([task, twin]))}
    # by_evidence: the occupation of each prompt's rank-1 label (its first label by rank, ties in row
    # order, as a stable sort finds it); a label moves to its smallest twin in that occupation when
    # its own task is not in it. An occupation is a code, -1 for none (a task without one, or not in
    # `tasks`), which no twin is in.
    codes, _ = pd.factorize(tasks["onet_soc_code"])
    occupation = pd.Series(codes, index=tasks["task_id"].astype("int64").to_numpy())
    occupation = occupation[~occupation.index.duplicated(keep="last")]  # a dict of the rows keeps the last
    order = np.lexsort((labels["rank"].to_numpy(), prompt))
    first = order[np.r_[True, prompt[order][1:] != prompt[order][:-1]]]
    top = np.full(int(prompt.max()) + 1, -1, dtype=np.int64)
    top[prompt[first]] = occupation.reindex(task[first]).fillna(-1).to_numpy(dtype=np.int64)
    twin_occupation = occupation.reindex(twin).fillna(-1).to_numpy(dtype=np.int64)
    own_occupation = occupation.reindex(task).fillna(-1).to_numpy(dtype=np.int64)
    label_top = top[prompt[row]]
    hit = (twin_occupation == label_top) & (label_top >= 0) & (own_occupation[row] != label_top)
    row, twin = row[hit], twin[hit]
    smallest = np.lexsort((twin, row))
    smallest = smallest[np.r_[True, row[smallest][1:] != row[smallest][:-1]]] if len(smallest) else smallest
    moved = task.copy()
    moved[row[smallest]] = twin[smallest]
    out["by_evidence"] = _per_task(prompt, moved)
    return out


def by_prompt_code(labels: pd.DataFrame) -> pd.DataFrame:
    """`labels` with the prompt as one integer column (prompt, task_id, rank: the coverage step's,
    a prompt by its position among every prompt) as `near_duplicate_counts` reads them (benchmark,
    prompt_id, task_id, rank): one benchmark, 0, whose prompt_id is that integer. The counts only ask
    which labels share a prompt, so they are those of the names when the rows are in the same order."""
    return pd.DataFrame(
        {"benchmark": np.zeros(len(labels), dtype=np.int64), "prompt_id": labels["prompt"].to_numpy(), "task_id": labels["task_id"].to_numpy(),
         "rank": labels["rank"].to_numpy()}
    )


def _prompt_codes(labels: pd.DataFrame) -> np.ndarray:
    """Each row's prompt, numbered 0, 1, … (equal for equal (benchmark, prompt_id)); integer codes
    (the step's) are taken as one integer first."""
    packed = packed_pairs((labels["benchmark"].to_numpy(), labels["prompt_id"].to_numpy()))
    if packed is not None:
        return pd.factorize(packed[0])[0].astype(np.int64)
    return labels.groupby(["benchmark", "prompt_id"], sort=False, dropna=False).ngroup().to_numpy(dtype=np.int64)


def _twins_of(task: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (label row, twin task) of the labels' tasks (`pairs`: task_id, twin_task_id)."""
    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    low, high = np.searchsorted(pairs[:, 0], task, "left"), np.searchsorted(pairs[:, 0], task, "right")
    row = np.repeat(np.arange(len(task)), high - low)
    at = np.arange(len(row)) - np.repeat(np.cumsum(high - low) - (high - low), high - low) + np.repeat(low, high - low)
    return row, pairs[at, 1]


def _per_task(prompt: np.ndarray, task: np.ndarray) -> pd.Series:
    """Distinct prompts per task (task_id -> n, tasks in order), as prompts_per_task counts them."""
    # The step's labels come ordered by prompt (two such runs for `together`, tasks a little out of
    # order for `by_evidence`); any order gives the same counts.
    key, low, radix = distinct_pairs(prompt, task)
    n = np.bincount(key % radix, minlength=radix)
    found = np.flatnonzero(n)
    return pd.Series(n[found].astype(np.int64), index=pd.Index(found + low, name="task_id"))
