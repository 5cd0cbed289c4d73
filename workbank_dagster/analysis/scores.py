"""O*NET-weighted occupation scores of models (docs/method.md §6).

For a model and an occupation: take the occupation's tasks with at least `k` scored prompts.
Weighted score = mean over those tasks of the mean score of each task's prompts (every O*NET task
counts equally). Simple score = mean over the distinct prompts mapped to any of those tasks.
`n_prompts_weak` counts those prompts whose labels the judge itself marks as weak (below its own
abstention bars, labeled only because of the abstention cap: uncertainty.weak_prompts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["model", "benchmark", "onet_soc_code", "n_tasks", "n_prompts", "n_prompts_weak", "share_of_occupation_tasks", "weighted_score", "simple_score"]


def occupation_model_scores(results: pd.DataFrame, labels: pd.DataFrame, tasks: pd.DataFrame, *, k: int = 5, weak: pd.DataFrame | None = None) -> pd.DataFrame:
    """`results`: benchmark, model, prompt_id, score. `labels`: benchmark, prompt_id, task_id.
    `tasks`: task_id, onet_soc_code (all tasks: the share's denominator). `weak`: benchmark,
    prompt_id of the prompts with weak labels (None: not known, n_prompts_weak NULL)."""
    if results.empty or labels.empty:
        return pd.DataFrame(columns=COLUMNS)
    occupation_tasks = tasks.groupby("onet_soc_code")["task_id"].nunique()
    task_occupations, occupations = _coded_occupations(tasks)
    pairs = labels[["benchmark", "prompt_id", "task_id"]].drop_duplicates()
    scored = results.merge(pairs, on=["benchmark", "prompt_id"]).merge(task_occupations, on="task_id")
    # Counting a group's rows instead of its distinct prompts is several times cheaper, and equal when no
    # prompt can come twice into a group (or be missing); otherwise count the distinct prompts.
    count = "size" if _each_prompt_once(results, task_occupations) else "nunique"
    per_task = scored.groupby(["model", "benchmark", "occupation", "task_id"]).agg(n=("prompt_id", count), mean=("score", "mean")).reset_index()
    eligible = per_task[per_task["n"] >= k]
    if eligible.empty:
        return pd.DataFrame(columns=COLUMNS)
    # per_task has one row per task of a group: its rows are its distinct tasks.
    weighted = eligible.groupby(["model", "benchmark", "occupation"]).agg(n_tasks=("task_id", "size"), weighted_score=("mean", "mean")).reset_index()
    kept = scored.merge(eligible[["model", "benchmark", "task_id"]], on=["model", "benchmark", "task_id"])
    distinct = kept.drop_duplicates(["model", "benchmark", "occupation", "prompt_id"])
    distinct = distinct.assign(weak=_weak_flags(distinct, weak))
    simple = (
        distinct.groupby(["model", "benchmark", "occupation"])
        .agg(n_prompts=("prompt_id", count), n_prompts_weak=("weak", "sum"), simple_score=("score", "mean"))
        .reset_index()
    )
    simple["n_prompts_weak"] = simple["n_prompts_weak"].astype("Int64") if weak is not None else pd.array([pd.NA] * len(simple), dtype="Int64")
    out = weighted.merge(simple, on=["model", "benchmark", "occupation"])
    out["onet_soc_code"] = occupations.take(out["occupation"].to_numpy(dtype=np.intp))
    out["share_of_occupation_tasks"] = out["n_tasks"] / out["onet_soc_code"].map(occupation_tasks)
    return out[COLUMNS].sort_values(["benchmark", "model", "onet_soc_code"]).reset_index(drop=True)


def _coded_occupations(tasks: pd.DataFrame) -> tuple[pd.DataFrame, pd.Index]:
    """task_id and `occupation`, the position of the task's onet_soc_code among the sorted codes (NaN
    without one), and those sorted codes to name the positions back."""
    # Grouping, merging and deduplicating millions of rows on a number is much cheaper than on the code's
    # string. Sorted positions order the groups as the strings do, and a missing code stays missing, so
    # every groupby gets the same rows in the same order and groups (pandas picks how it sums a mean's
    # values by whether the groups are in order, and that choice can move the last bit).
    codes, occupations = pd.factorize(tasks["onet_soc_code"], sort=True)
    return pd.DataFrame({"task_id": tasks["task_id"].to_numpy(), "occupation": np.where(codes >= 0, codes, np.nan)}), occupations


def _each_prompt_once(results: pd.DataFrame, task_occupations: pd.DataFrame) -> bool:
    """Whether every (model, benchmark, occupation, task) group of the scored rows holds each prompt at
    most once, and none without an id: no (benchmark, model, prompt_id) repeats in `results` and no
    task repeats its occupation (the labels' pairs are deduplicated before)."""
    # A check, not a trust in the marts' uniqueness tests: the function is also called on other frames.
    return (
        bool(results["prompt_id"].notna().all())
        and pd.MultiIndex.from_frame(results[["benchmark", "model", "prompt_id"]]).is_unique
        and not task_occupations.duplicated().any()
    )


def _weak_flags(frame: pd.DataFrame, weak: pd.DataFrame | None) -> np.ndarray:
    """For each row of `frame`, whether its (benchmark, prompt_id) is one of `weak`'s (all False
    without `weak`; a prompt without an id is never weak)."""
    if weak is None:
        return np.zeros(len(frame), dtype=bool)
    keys = weak[["benchmark", "prompt_id"]].dropna()
    return pd.MultiIndex.from_frame(frame[["benchmark", "prompt_id"]]).isin(pd.MultiIndex.from_frame(keys))


def score_differences(scores: pd.DataFrame, titles: pd.Series, top: int = 10) -> pd.DataFrame:
    """Where the weighted and simple scores differ most (absolute gap), with a readable label."""
    if scores.empty:
        return scores.assign(gap=[], title=[], label=[])
    out = scores.assign(gap=scores["weighted_score"] - scores["simple_score"])
    out["title"] = out["onet_soc_code"].map(titles)
    out["label"] = out["title"] + " · " + out["n_tasks"].astype(str) + " tasks · " + out["n_prompts"].astype(str) + " prompts"
    return out.reindex(out["gap"].abs().sort_values(ascending=False).index).head(top).reset_index(drop=True)
