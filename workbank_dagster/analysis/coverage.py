"""Coverage summaries and their sensitivity (METHOD.md §4) as pure functions.

`labels`: benchmark, prompt_id, task_id, prompt_hash (one labeler). `tasks`: task_id,
onet_soc_code, family_code, hours (NaN where the occupation has no employment). Families are the
22 civilian SOC major groups.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

SUMMARY_COLUMNS = ["n_tasks_covered", "n_occupations_with_covered_task", "n_families_without_covered_occupation", "work_time_share_uncovered"]


def prompts_per_task(labels: pd.DataFrame, *, dedupe_texts: bool = False) -> pd.Series:
    """Distinct prompts per task; with dedupe_texts, identical prompt texts count once."""
    if labels.empty:
        return pd.Series(dtype="int64")
    key = labels["prompt_hash"] if dedupe_texts else labels["benchmark"].astype(str) + "\x1f" + labels["prompt_id"].astype(str)
    return key.groupby(labels["task_id"].astype(int)).nunique()


def summarise(n_prompts: pd.Series | np.ndarray, tasks: pd.DataFrame, threshold: int, families: list[str]) -> dict:
    """The headline coverage numbers for given per-task prompt counts (aligned to `tasks` if an array)."""
    counts = n_prompts.reindex(tasks["task_id"].astype(int)).fillna(0).to_numpy() if isinstance(n_prompts, pd.Series) else np.asarray(n_prompts)
    covered = counts >= threshold
    by_occupation = pd.Series(covered).groupby(tasks["onet_soc_code"].to_numpy()).any()
    families_with = set(tasks.loc[covered, "family_code"])
    hours = tasks["hours"].to_numpy(dtype=float)
    has_hours = ~np.isnan(hours)
    total = hours[has_hours].sum()
    uncovered = hours[has_hours & ~covered].sum()
    return {
        "n_tasks_covered": int(covered.sum()),
        "n_occupations_with_covered_task": int(by_occupation.sum()),
        "n_families_without_covered_occupation": int(sum(1 for f in families if f not in families_with)),
        "work_time_share_uncovered": float(uncovered / total) if total else None,
    }


def sensitivity_table(
    labels_by_labeler: dict[str, pd.DataFrame],
    tasks: pd.DataFrame,
    families: list[str],
    *,
    active_labeler: str,
    threshold: int,
    thresholds: tuple[int, ...] = (1, 3, 5, 10),
) -> pd.DataFrame:
    """variant, threshold, labeler, and the four summary numbers, for every variant of METHOD.md §4."""
    rows = []
    active = labels_by_labeler.get(active_labeler, pd.DataFrame(columns=["benchmark", "prompt_id", "task_id", "prompt_hash"]))
    base_counts = prompts_per_task(active)
    for t in sorted(set(thresholds) | {threshold}):
        rows.append({"variant": "threshold", "threshold": t, "labeler": active_labeler, **summarise(base_counts, tasks, t, families)})
    for labeler, labels in sorted(labels_by_labeler.items()):
        rows.append({"variant": "judge", "threshold": threshold, "labeler": labeler, **summarise(prompts_per_task(labels), tasks, threshold, families)})
    rows.append({"variant": "duplicate_texts_once", "threshold": threshold, "labeler": active_labeler, **summarise(prompts_per_task(active, dedupe_texts=True), tasks, threshold, families)})
    for benchmark in sorted(active["benchmark"].unique()) if len(active) else []:
        rest = active[active["benchmark"] != benchmark]
        rows.append({"variant": f"without:{benchmark}", "threshold": threshold, "labeler": active_labeler, **summarise(prompts_per_task(rest), tasks, threshold, families)})
    return pd.DataFrame(rows, columns=["variant", "threshold", "labeler", *SUMMARY_COLUMNS])


def bootstrap_uncovered_share(
    labels: pd.DataFrame,
    prompts: pd.DataFrame,
    tasks: pd.DataFrame,
    threshold: int,
    *,
    replicates: int = 200,
    seed: int = 20250601,
    progress=None,
) -> dict:
    """Bootstrap of the uncovered work-time share, resampling prompts within benchmarks.

    `prompts`: benchmark, prompt_id (every prompt, labeled or not: an unlabeled prompt drawn counts
    for nothing, as in the data). A prompt drawn k times counts k times toward n_prompts.

    Covered is a threshold on a count, and resampling spreads counts: tasks just below the threshold
    cross it more often than tasks just above fall below it (there are many more of the former), so
    the bootstrap distribution sits below the estimate. The plain percentile interval can then miss
    the estimate altogether. We report it, and use as the interval the percentile interval shifted by
    the estimated bias (estimate - bootstrap mean), which keeps the bootstrap's spread and centres it
    on the estimate.
    """
    # The draws index prompts by position: a fixed order makes the interval a function of the data,
    # not of the order a table happens to return its rows in (a refreshed partition comes last).
    prompts = prompts[["benchmark", "prompt_id"]].drop_duplicates().sort_values(["benchmark", "prompt_id"]).reset_index(drop=True)
    tasks = tasks.sort_values("task_id").reset_index(drop=True)
    prompt_index = {key: i for i, key in enumerate(zip(prompts["benchmark"], prompts["prompt_id"]))}
    task_index = {int(t): j for j, t in enumerate(tasks["task_id"])}
    rows, cols = [], []
    for b, p, t in zip(labels["benchmark"], labels["prompt_id"], labels["task_id"]):
        i, j = prompt_index.get((b, p)), task_index.get(int(t))
        if i is not None and j is not None:
            rows.append(i)
            cols.append(j)
    incidence = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(prompts), len(tasks)))
    incidence.data[:] = 1.0  # a prompt-task pair counts once
    hours = tasks["hours"].to_numpy(dtype=float)
    has_hours = ~np.isnan(hours)
    total = hours[has_hours].sum()
    groups = [np.where(prompts["benchmark"].to_numpy() == b)[0] for b in prompts["benchmark"].unique()]
    rng = np.random.default_rng(seed)
    shares = np.empty(replicates)
    meter = progress("bootstrap of the uncovered work-time share", replicates, "replicates") if progress is not None else None
    for r in range(replicates):
        weights = np.zeros(len(prompts))
        for members in groups:
            np.add.at(weights, rng.choice(members, size=len(members), replace=True), 1.0)
        counts = incidence.T @ weights
        covered = counts >= threshold
        shares[r] = hours[has_hours & ~covered].sum() / total
        if meter is not None:
            meter.update(1)
    if meter is not None:
        meter.close()
    observed = incidence.T @ np.ones(len(prompts))
    estimate = float(hours[has_hours & ~(observed >= threshold)].sum() / total)
    low, high = np.percentile(shares, [2.5, 97.5])
    bias = estimate - float(shares.mean())
    return {
        "estimate": estimate,
        "bootstrap_mean": float(shares.mean()),
        "ci_low_percentile": float(low),
        "ci_high_percentile": float(high),
        "ci_low": float(low + bias),
        "ci_high": float(high + bias),
        "replicates": replicates,
        "shares": shares,
    }
