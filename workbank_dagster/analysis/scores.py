"""O*NET-weighted occupation scores of models (docs/method.md §6).

For a model and an occupation: take the occupation's tasks with at least `k` scored prompts.
Weighted score = mean over those tasks of the mean score of each task's prompts (every O*NET task
counts equally). Simple score = mean over the distinct prompts mapped to any of those tasks.
`n_prompts_weak` counts those prompts whose labels the judge itself marks as weak (below its own
abstention bars, labeled only because of the abstention cap: uncertainty.weak_prompts).
"""

from __future__ import annotations

import pandas as pd

COLUMNS = ["model", "benchmark", "onet_soc_code", "n_tasks", "n_prompts", "n_prompts_weak", "share_of_occupation_tasks", "weighted_score", "simple_score"]


def occupation_model_scores(results: pd.DataFrame, labels: pd.DataFrame, tasks: pd.DataFrame, *, k: int = 5, weak: pd.DataFrame | None = None) -> pd.DataFrame:
    """`results`: benchmark, model, prompt_id, score. `labels`: benchmark, prompt_id, task_id.
    `tasks`: task_id, onet_soc_code (all tasks: the share's denominator). `weak`: benchmark,
    prompt_id of the prompts with weak labels (None: not known, n_prompts_weak NULL)."""
    if results.empty or labels.empty:
        return pd.DataFrame(columns=COLUMNS)
    occupation_tasks = tasks.groupby("onet_soc_code")["task_id"].nunique()
    pairs = labels[["benchmark", "prompt_id", "task_id"]].drop_duplicates()
    scored = results.merge(pairs, on=["benchmark", "prompt_id"]).merge(tasks[["task_id", "onet_soc_code"]], on="task_id")
    per_task = scored.groupby(["model", "benchmark", "onet_soc_code", "task_id"]).agg(n=("prompt_id", "nunique"), mean=("score", "mean")).reset_index()
    eligible = per_task[per_task["n"] >= k]
    if eligible.empty:
        return pd.DataFrame(columns=COLUMNS)
    weighted = eligible.groupby(["model", "benchmark", "onet_soc_code"]).agg(n_tasks=("task_id", "nunique"), weighted_score=("mean", "mean")).reset_index()
    kept = scored.merge(eligible[["model", "benchmark", "task_id"]], on=["model", "benchmark", "task_id"])
    distinct = kept.drop_duplicates(["model", "benchmark", "onet_soc_code", "prompt_id"])
    weak_keys = set(zip(weak["benchmark"], weak["prompt_id"])) if weak is not None else set()
    distinct = distinct.assign(weak=[key in weak_keys for key in zip(distinct["benchmark"], distinct["prompt_id"])])
    simple = (
        distinct.groupby(["model", "benchmark", "onet_soc_code"])
        .agg(n_prompts=("prompt_id", "nunique"), n_prompts_weak=("weak", "sum"), simple_score=("score", "mean"))
        .reset_index()
    )
    simple["n_prompts_weak"] = simple["n_prompts_weak"].astype("Int64") if weak is not None else pd.array([pd.NA] * len(simple), dtype="Int64")
    out = weighted.merge(simple, on=["model", "benchmark", "onet_soc_code"])
    out["share_of_occupation_tasks"] = out["n_tasks"] / out["onet_soc_code"].map(occupation_tasks)
    return out[COLUMNS].sort_values(["benchmark", "model", "onet_soc_code"]).reset_index(drop=True)


def score_differences(scores: pd.DataFrame, titles: pd.Series, top: int = 10) -> pd.DataFrame:
    """Where the weighted and simple scores differ most (absolute gap), with a readable label."""
    if scores.empty:
        return scores.assign(gap=[], title=[], label=[])
    out = scores.assign(gap=scores["weighted_score"] - scores["simple_score"])
    out["title"] = out["onet_soc_code"].map(titles)
    out["label"] = out["title"] + " · " + out["n_tasks"].astype(str) + " tasks · " + out["n_prompts"].astype(str) + " prompts"
    return out.reindex(out["gap"].abs().sort_values(ascending=False).index).head(top).reset_index(drop=True)
