"""O*NET-weighted occupation scores of models (docs/method.md §6).

For a model and an occupation: take the occupation's tasks with at least `k` scored prompts.
Weighted score = mean over those tasks of the mean score of each task's prompts (every O*NET task
counts equally). Simple score = mean over the distinct prompts mapped to any of those tasks.
"""

from __future__ import annotations

import pandas as pd

COLUMNS = ["model", "benchmark", "onet_soc_code", "n_tasks", "n_prompts", "share_of_occupation_tasks", "weighted_score", "simple_score"]


def occupation_model_scores(results: pd.DataFrame, labels: pd.DataFrame, tasks: pd.DataFrame, *, k: int = 5) -> pd.DataFrame:
    """`results`: benchmark, model, prompt_id, score. `labels`: benchmark, prompt_id, task_id.
    `tasks`: task_id, onet_soc_code (all tasks: the share's denominator)."""
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
    simple = (
        kept.drop_duplicates(["model", "benchmark", "onet_soc_code", "prompt_id"])
        .groupby(["model", "benchmark", "onet_soc_code"])
        .agg(n_prompts=("prompt_id", "nunique"), simple_score=("score", "mean"))
        .reset_index()
    )
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
