"""Coverage summaries and their sensitivity (docs/method.md §4) as pure functions.

`labels`: benchmark, prompt_id, task_id, prompt_hash (one labeler). `tasks`: task_id,
onet_soc_code, family_code, hours (NaN where the occupation has no employment). Families are the
22 civilian SOC major groups.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from .near_duplicates import MODES, labels_with_twins

SUMMARY_COLUMNS = ["n_tasks_covered", "n_occupations_with_covered_task", "n_families_without_covered_occupation", "work_time_share_uncovered"]


def prompts_per_task(labels: pd.DataFrame, *, dedupe_texts: bool = False) -> pd.Series:
    """Distinct prompts per task; with dedupe_texts, identical prompt texts count once."""
    if labels.empty:
        return pd.Series(dtype="int64")
    key = labels["prompt_hash"] if dedupe_texts else labels["benchmark"].astype(str) + "\x1f" + labels["prompt_id"].astype(str)
    return key.groupby(labels["task_id"].astype(int)).nunique()


def aligned_to_tasks(per_task: pd.Series, tasks: pd.DataFrame) -> np.ndarray:
    """A count per task id, aligned to the rows of `tasks` (0 for a task it does not name)."""
    return per_task.reindex(tasks["task_id"].astype(int)).fillna(0).to_numpy()


def task_counts(labels: pd.DataFrame, tasks: pd.DataFrame) -> np.ndarray:
    """Distinct prompts per task, aligned to the rows of `tasks` (0 for a task no prompt labels)."""
    return aligned_to_tasks(prompts_per_task(labels), tasks)


def summarise(n_prompts: pd.Series | np.ndarray, tasks: pd.DataFrame, threshold: int, families: list[str]) -> dict:
    """The headline coverage numbers for given per-task prompt counts (aligned to `tasks` if an array)."""
    counts = aligned_to_tasks(n_prompts, tasks) if isinstance(n_prompts, pd.Series) else np.asarray(n_prompts)
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
    twins: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """variant, threshold, labeler, and the four summary numbers, for every variant of docs/method.md §4,
    and, given `twins` (near-identical statements, analysis/near_duplicates.py), the active labels
    counted each way of counting a label on one of them (`near_duplicates:<mode>`)."""
    rows = []
    active = labels_by_labeler.get(active_labeler, pd.DataFrame(columns=["benchmark", "prompt_id", "task_id", "rank", "prompt_hash"]))
    base_counts = prompts_per_task(active)
    for t in sorted(set(thresholds) | {threshold}):
        rows.append({"variant": "threshold", "threshold": t, "labeler": active_labeler, **summarise(base_counts, tasks, t, families)})
    if twins is not None:
        owner = dict(zip(tasks["task_id"].astype(int), tasks["onet_soc_code"]))
        for mode in MODES:
            counted = labels_with_twins(active, twins, mode, owner)
            rows.append({"variant": f"near_duplicates:{mode}", "threshold": threshold, "labeler": active_labeler, **summarise(prompts_per_task(counted), tasks, threshold, families)})
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
    for nothing, as in the data). A prompt drawn k times counts k times toward n_prompts. The
    intervals are those of `bootstrap_intervals`; which one is reported, and why it is called a
    spread and not a confidence interval, is said there.
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
    groups = [np.where(prompts["benchmark"].to_numpy() == b)[0] for b in prompts["benchmark"].unique()]
    return bootstrap_share(incidence, tasks["hours"].to_numpy(dtype=float), groups, threshold, replicates=replicates,
                           rng=np.random.default_rng(seed), progress=progress)


def uncovered_share(counts: np.ndarray, hours: np.ndarray, threshold: int) -> float:
    """Share of the hours (tasks with hours only) on tasks with fewer than `threshold` prompts."""
    has_hours = ~np.isnan(hours)
    return float(hours[has_hours & (counts < threshold)].sum() / hours[has_hours].sum())


def bootstrap_share(incidence, hours: np.ndarray, groups: list[np.ndarray], threshold: int, *, replicates: int, rng, progress=None) -> dict:
    """The bootstrap of `uncovered_share` over a prompt x task incidence matrix, prompts resampled
    within `groups` (benchmarks); the estimate, every interval of `bootstrap_intervals` and the
    replicates."""
    n_prompts = incidence.shape[0]
    shares = np.empty(replicates)
    meter = progress("bootstrap of the uncovered work-time share", replicates, "replicates") if progress is not None else None
    for r in range(replicates):
        weights = np.zeros(n_prompts)
        for members in groups:
            weights += np.bincount(rng.choice(members, size=len(members), replace=True), minlength=n_prompts)
        shares[r] = uncovered_share(incidence.T @ weights, hours, threshold)
        if meter is not None:
            meter.update(1)
    if meter is not None:
        meter.close()
    observed = incidence.T @ np.ones(n_prompts)
    estimate = uncovered_share(observed, hours, threshold)
    # Jackknife (leave one prompt out) for BCa's acceleration: removing prompt i uncovers exactly the
    # tasks it labels that sit at the threshold.
    has_hours = ~np.isnan(hours)
    at_threshold = np.where(has_hours & (observed == threshold), hours, 0.0)
    jackknife = estimate + (incidence @ at_threshold) / hours[has_hours].sum()
    return {"estimate": estimate, **bootstrap_intervals(shares, estimate, jackknife), "replicates": replicates, "shares": shares}


# The interval the pipeline reports (see bootstrap_intervals).
REPORTED_INTERVAL = "basic"
INTERVAL_NOTE = (
    "basic (pivotal) bootstrap interval, 2*estimate - percentiles; a descriptive spread, not a confidence interval: "
    "for a count threshold no bootstrap interval reaches its nominal coverage (bench/interval_coverage.json)"
)


def bootstrap_intervals(shares: np.ndarray, estimate: float, jackknife: np.ndarray | None = None, level: float = 0.95) -> dict:
    """Three standard 95% bootstrap intervals (Efron & Tibshirani 1993, ch. 13-14; Davison & Hinkley 1997, §5.2-5.3).

    - percentile: the 2.5% and 97.5% quantiles of the replicates;
    - basic (pivotal): 2·estimate minus those quantiles, which corrects the bootstrap's bias;
    - BCa: percentiles moved by the bias correction z0 = Φ⁻¹(share of replicates below the estimate)
      and the acceleration from the jackknife values (when given).

    Covered is a threshold on a count, and resampling spreads counts: tasks just below the threshold
    cross it more often than tasks just above fall below it, so the replicates sit below the
    estimate and the percentile interval lies low. `ci_low`/`ci_high` are the REPORTED_INTERVAL's.
    """
    from scipy import stats

    alpha = (1 - level) / 2
    low, high = np.percentile(shares, [100 * alpha, 100 * (1 - alpha)])
    out = {
        "bootstrap_mean": float(shares.mean()),
        "ci_low_percentile": float(low),
        "ci_high_percentile": float(high),
        "ci_low_basic": float(2 * estimate - high),
        "ci_high_basic": float(2 * estimate - low),
    }
    n = len(shares)
    below = (np.sum(shares < estimate) + 0.5 * np.sum(shares == estimate)) / n
    z0 = stats.norm.ppf(np.clip(below, 0.5 / n, 1 - 0.5 / n))
    acceleration = 0.0
    if jackknife is not None and len(jackknife) > 1:
        d = jackknife.mean() - jackknife
        denominator = 6.0 * float((d**2).sum()) ** 1.5
        acceleration = float((d**3).sum() / denominator) if denominator > 0 else 0.0
    z = stats.norm.ppf([alpha, 1 - alpha])
    adjusted = stats.norm.cdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    bca_low, bca_high = np.percentile(shares, 100 * np.clip(adjusted, 0.0, 1.0))
    out.update({"ci_low_bca": float(bca_low), "ci_high_bca": float(bca_high), "bca_z0": float(z0), "bca_acceleration": acceleration})
    out["ci_low"], out["ci_high"] = out[f"ci_low_{REPORTED_INTERVAL}"], out[f"ci_high_{REPORTED_INTERVAL}"]
    out["method"] = INTERVAL_NOTE
    return out


def simulate_interval_coverage(
    *, samples: int = 400, replicates: int = 200, seed: int = 2026, n_tasks: int = 2000, sizes: tuple[int, ...] = (200, 300, 400),
    labels_per_prompt: int = 2, threshold: int = 5,
) -> dict:
    """How often each bootstrap interval of `bootstrap_share` covers the true uncovered share.

    A synthetic population with a known answer: `n_tasks` tasks with log-normal hours and a skewed
    (Pareto) chance of being labeled; a benchmark suite is `sizes` prompts in benchmarks, each prompt
    labeling `labels_per_prompt` distinct tasks drawn with those chances. The true share is the
    plug-in one, the share of hours on tasks whose expected number of prompts in a suite of this
    size is below `threshold` (the inclusion chances are measured on 200,000 simulated prompts).
    Each of `samples` suites is drawn, its share estimated and bootstrapped as the pipeline does
    (prompts resampled within benchmarks, `replicates` replicates).
    """
    rng = np.random.default_rng(seed)
    hours = rng.lognormal(0.0, 1.0, n_tasks)
    weight = rng.pareto(1.2, n_tasks) + 0.05
    log_p = np.log(weight / weight.sum())

    def draw(n: int) -> np.ndarray:  # Gumbel top-k: k distinct tasks per prompt, drawn by weight
        keys = log_p + rng.gumbel(size=(n, n_tasks))
        rows = np.arange(n)
        chosen = np.empty((n, labels_per_prompt), dtype=np.int64)
        for j in range(labels_per_prompt):  # the k largest keys by k row-wise argmaxes (30x faster than argpartition)
            chosen[:, j] = keys.argmax(axis=1)
            keys[rows, chosen[:, j]] = -np.inf
        return chosen

    inclusion = np.zeros(n_tasks)
    for _ in range(20):
        np.add.at(inclusion, draw(10_000).ravel(), 1.0)
    n_prompts = sum(sizes)
    expected = n_prompts * inclusion / 200_000
    truth = float(hours[expected < threshold].sum() / hours.sum())
    groups, start = [], 0
    for size in sizes:
        groups.append(np.arange(start, start + size))
        start += size
    methods = ("percentile", "basic", "bca")
    covered = dict.fromkeys(methods, 0)
    estimates = np.empty(samples)
    for s in range(samples):
        chosen = draw(n_prompts)
        incidence = sparse.csr_matrix(
            (np.ones(chosen.size), (np.repeat(np.arange(n_prompts), labels_per_prompt), chosen.ravel())), shape=(n_prompts, n_tasks)
        )
        boot = bootstrap_share(incidence, hours, groups, threshold, replicates=replicates, rng=rng)
        estimates[s] = boot["estimate"]
        for m in methods:
            covered[m] += boot[f"ci_low_{m}"] <= truth <= boot[f"ci_high_{m}"]
    return {
        "samples": samples,
        "replicates": replicates,
        "seed": seed,
        "population": {"tasks": n_tasks, "benchmark_sizes": list(sizes), "labels_per_prompt": labels_per_prompt, "threshold": threshold},
        "true_share": truth,
        "mean_estimate": float(estimates.mean()),
        "coverage": {m: covered[m] / samples for m in methods},
        "reported": REPORTED_INTERVAL,
    }
