"""Coverage summaries and their sensitivity (docs/method.md §4) as pure functions.

`labels`: benchmark, prompt_id, task_id, prompt_hash (one labeler). `tasks`: task_id,
onet_soc_code, family_code, hours (NaN where the occupation has no employment). Families are the
22 civilian SOC major groups.

The figures over every benchmark, and each benchmark left out, are made from one labeler's
per-benchmark aggregate, `BenchmarkCounts` (distinct prompts per benchmark and task), not from its
labels: a prompt belongs to one benchmark, so a task's prompts over all benchmarks are the sum of
its prompts in each, and without one benchmark that sum less its row. The analysis step reads the
aggregate from the warehouse (analysis/label_steps.py); `BenchmarkCounts.from_labels` makes the same from
labels. The bootstrap resamples prompts, so it reads each labeled (prompt, task) pair, as integers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from .keys import distinct_pairs, positions_among

SUMMARY_COLUMNS = ["n_tasks_covered", "n_occupations_with_covered_task", "n_families_without_covered_occupation", "work_time_share_uncovered"]


def prompts_per_task(labels: pd.DataFrame, *, dedupe_texts: bool = False) -> pd.Series:
    """Distinct prompts per task; with dedupe_texts, identical prompt texts count once."""
    if labels.empty:
        return pd.Series(dtype="int64")
    task = labels["task_id"].astype(int)
    if dedupe_texts:
        return labels["prompt_hash"].groupby(task).nunique()
    # Distinct (task, benchmark, prompt) rows, counted: a string key per label and nunique took 1.5 s on
    # 2.3 M labels.
    return pd.DataFrame({"task_id": task.to_numpy(), "benchmark": labels["benchmark"].to_numpy(), "prompt_id": labels["prompt_id"].to_numpy()}).drop_duplicates().groupby("task_id").size()


def aligned_to_tasks(per_task: pd.Series, tasks: pd.DataFrame) -> np.ndarray:
    """A count per task id, aligned to the rows of `tasks` (0 for a task it does not name)."""
    return per_task.reindex(tasks["task_id"].astype(int)).fillna(0).to_numpy()


def task_counts(labels: pd.DataFrame, tasks: pd.DataFrame) -> np.ndarray:
    """Distinct prompts per task, aligned to the rows of `tasks` (0 for a task no prompt labels)."""
    return aligned_to_tasks(prompts_per_task(labels), tasks)


def task_positions(task_ids, tasks: pd.DataFrame) -> np.ndarray:
    """The row of `tasks` of each task id (-1 for a task id `tasks` does not have)."""
    return positions_among(task_ids, tasks["task_id"].astype(int))


class BenchmarkCounts:
    """One labeler's distinct prompts per benchmark and task, as a benchmarks x tasks matrix whose
    columns are the rows of `tasks` (a task `tasks` lacks is left out): the coverage over every
    benchmark (`total`) and without any one of them (`without`).

    `counts`: benchmark, task_id, n_prompts (the prompts of the benchmark labeled with the task)."""

    def __init__(self, counts: pd.DataFrame, tasks: pd.DataFrame):
        self.benchmarks: list[str] = sorted(set(counts["benchmark"]))
        position = task_positions(counts["task_id"], tasks)
        known = position >= 0
        rows = pd.Categorical(counts["benchmark"], categories=self.benchmarks).codes[known]
        self.matrix = sparse.csr_matrix(
            (counts["n_prompts"].to_numpy(dtype=float)[known], (rows, position[known])), shape=(len(self.benchmarks), len(tasks))
        )
        self.total: np.ndarray = np.asarray(self.matrix.sum(axis=0), dtype=float).ravel()
        self._row = {benchmark: i for i, benchmark in enumerate(self.benchmarks)}

    @classmethod
    def from_labels(cls, labels: pd.DataFrame, tasks: pd.DataFrame) -> BenchmarkCounts:
        """The same from one labeler's labels (benchmark, prompt_id, task_id)."""
        counts = labels.groupby(["benchmark", labels["task_id"].astype(int)])["prompt_id"].nunique().rename("n_prompts").reset_index()
        return cls(counts, tasks)

    def without(self, benchmark: str) -> np.ndarray:
        """Distinct prompts per task (aligned to `tasks`) over every benchmark but this one."""
        return self.total - self.matrix[self._row[benchmark]].toarray().ravel()


def counts_of_pairs(pairs: pd.DataFrame, sizes: pd.DataFrame) -> pd.DataFrame:
    """benchmark, task_id, n_prompts (`BenchmarkCounts`' input) from labeled pairs (prompt, task_id;
    the prompt by its position among every prompt, benchmarks in order, as the bootstrap reads them)
    and `sizes` (benchmark, n_prompts: each benchmark's prompts in that order): a prompt's benchmark
    is the block of positions it falls in. What counting distinct prompt_id per benchmark and task
    gives, without the names: at a million prompts the warehouse's count took 0.66 to 0.80 s, the
    other labelers' (none there) and this 0.20 to 0.34 s (three each, alternated)."""
    prompt = pairs["prompt"].to_numpy(dtype=np.int64)
    task = pairs["task_id"].to_numpy(dtype=np.int64)
    if not len(prompt):
        return pd.DataFrame({"benchmark": pd.Series(dtype=object), "task_id": pd.Series(dtype=np.int64), "n_prompts": pd.Series(dtype=np.int64)})
    key, low, radix = distinct_pairs(prompt, task)
    benchmark = np.searchsorted(np.cumsum(sizes["n_prompts"].to_numpy(dtype=np.int64)), key // radix, side="right")
    cell = benchmark * radix + key % radix
    cells, n = np.unique(cell, return_counts=True)
    names = sizes["benchmark"].to_numpy(dtype=object)
    return pd.DataFrame({"benchmark": names[cells // radix], "task_id": cells % radix + low, "n_prompts": n.astype(np.int64)})


def summarise(n_prompts: pd.Series | np.ndarray, tasks: pd.DataFrame, threshold: int, families: list[str]) -> dict:
    """The headline coverage numbers for given per-task prompt counts (aligned to `tasks` if an array)."""
    return Summary(tasks, families)(n_prompts, threshold)


class Summary:
    """`summarise` for one `tasks` and `families`, their groups coded once: the sensitivity table
    and each benchmark's contribution summarise every benchmark left out (a thousand times, at a
    thousand benchmarks)."""

    def __init__(self, tasks: pd.DataFrame, families: list[str]):
        self.tasks = tasks
        self.families = list(families)
        self.occupation, _ = pd.factorize(tasks["onet_soc_code"])  # -1: no occupation (left out, as groupby does)
        self.n_occupations = int(self.occupation.max()) + 1 if len(self.occupation) else 0
        distinct = list(dict.fromkeys(self.families))
        self.n_distinct_families = len(distinct)
        self.family = pd.Categorical(tasks["family_code"], categories=distinct).codes
        self.family_of = np.array([distinct.index(f) for f in self.families], dtype=np.int64)  # each of `families`, duplicates too
        self.hours = tasks["hours"].to_numpy(dtype=float)
        self.has_hours = ~np.isnan(self.hours)
        self.total = self.hours[self.has_hours].sum()

    def __call__(self, n_prompts: pd.Series | np.ndarray, threshold: int) -> dict:
        counts = aligned_to_tasks(n_prompts, self.tasks) if isinstance(n_prompts, pd.Series) else np.asarray(n_prompts)
        covered = counts >= threshold
        # The occupations marked, not np.unique's sort: the same number; the sensitivity table's
        # thousand benchmarks left out took 0.31 to 0.33 s, against 0.40 to 0.50, at a million prompts.
        occupations_with = np.zeros(self.n_occupations, dtype=bool)
        occupations_with[self.occupation[covered & (self.occupation >= 0)]] = True
        with_family = np.zeros(self.n_distinct_families, dtype=bool)
        with_family[self.family[covered & (self.family >= 0)]] = True
        uncovered = self.hours[self.has_hours & ~covered].sum()
        return {
            "n_tasks_covered": int(covered.sum()),
            "n_occupations_with_covered_task": int(occupations_with.sum()),
            "n_families_without_covered_occupation": int((~with_family[self.family_of]).sum()),
            "work_time_share_uncovered": float(uncovered / self.total) if self.total else None,
        }


def sensitivity_table(
    counts_by_labeler: dict[str, BenchmarkCounts],
    texts_per_task: pd.Series,
    tasks: pd.DataFrame,
    families: list[str],
    *,
    active_labeler: str,
    threshold: int,
    thresholds: tuple[int, ...] = (1, 3, 5, 10),
    near_duplicates: dict[str, pd.Series] | None = None,
) -> pd.DataFrame:
    """variant, threshold, labeler, and the four summary numbers, for every variant of docs/method.md §4:
    from each labeler's per-benchmark counts, and the active labeler's distinct prompt texts per task
    (`texts_per_task`: task_id -> n, the duplicate-texts variant; a text may be in several benchmarks);
    given `near_duplicates` (mode -> the active labeler's prompts per task counted that way,
    analysis/near_duplicates.py), a row `near_duplicates:<mode>` for each."""
    rows = []
    summary = Summary(tasks, families)
    active = counts_by_labeler.get(active_labeler) or BenchmarkCounts(pd.DataFrame(columns=["benchmark", "task_id", "n_prompts"]), tasks)
    for t in sorted(set(thresholds) | {threshold}):
        rows.append({"variant": "threshold", "threshold": t, "labeler": active_labeler, **summary(active.total, t)})
    for mode, per_task in (near_duplicates or {}).items():
        rows.append({"variant": f"near_duplicates:{mode}", "threshold": threshold, "labeler": active_labeler, **summary(per_task, threshold)})
    for labeler, counts in sorted(counts_by_labeler.items()):
        rows.append({"variant": "judge", "threshold": threshold, "labeler": labeler, **summary(counts.total, threshold)})
    rows.append({"variant": "duplicate_texts_once", "threshold": threshold, "labeler": active_labeler, **summary(texts_per_task, threshold)})
    for benchmark in active.benchmarks:
        rows.append({"variant": f"without:{benchmark}", "threshold": threshold, "labeler": active_labeler, **summary(active.without(benchmark), threshold)})
    return pd.DataFrame(rows, columns=["variant", "threshold", "labeler", *SUMMARY_COLUMNS])


def prompt_task_pairs(labels: pd.DataFrame, prompts: pd.DataFrame) -> tuple[pd.DataFrame, list[int]]:
    """What the bootstrap reads, from labels and prompts frames: each labeled (prompt, task) pair,
    the prompt as its position among every prompt ordered by benchmark then prompt_id (a label of a
    prompt `prompts` lacks is left out), and the number of prompts of each benchmark in that order.
    The analysis step reads the same from the warehouse."""
    prompts = prompts[["benchmark", "prompt_id"]].drop_duplicates().sort_values(["benchmark", "prompt_id"]).reset_index(drop=True)
    position = pd.Series(np.arange(len(prompts)), index=pd.MultiIndex.from_frame(prompts))
    at = position.reindex(pd.MultiIndex.from_frame(labels[["benchmark", "prompt_id"]])).to_numpy()
    known = ~np.isnan(at)
    pairs = pd.DataFrame({"prompt": at[known].astype(np.int64), "task_id": labels["task_id"].to_numpy()[known].astype(np.int64)})
    return pairs, prompts.groupby("benchmark", sort=True).size().tolist()


def bootstrap_uncovered_share(
    pairs: pd.DataFrame,
    benchmark_sizes: Sequence[int],
    tasks: pd.DataFrame,
    threshold: int,
    *,
    replicates: int = 200,
    seed: int = 20250601,
    progress=None,
) -> dict:
    """Bootstrap of the uncovered work-time share, resampling prompts within benchmarks.

    `pairs`: prompt, task_id, each labeled pair (`prompt_task_pairs`: the prompt's position among
    every prompt, labeled or not, benchmarks in order); `benchmark_sizes`: the prompts of each
    benchmark in that order (an unlabeled prompt drawn counts for nothing, as in the data). A prompt
    drawn k times counts k times toward n_prompts. The intervals are those of `bootstrap_intervals`;
    which one is reported, and why it is called a spread and not a confidence interval, is said there.
    """
    # The draws index prompts by position: a fixed order makes the interval a function of the data,
    # not of the order a table happens to return its rows in (a refreshed partition comes last).
    tasks = tasks.sort_values("task_id").reset_index(drop=True)
    n_prompts = int(sum(benchmark_sizes))
    column = task_positions(pairs["task_id"], tasks)
    known = column >= 0
    incidence = sparse.csr_matrix(
        (np.ones(int(known.sum())), (pairs["prompt"].to_numpy()[known], column[known])), shape=(n_prompts, len(tasks))
    )
    incidence.data[:] = 1.0  # a prompt-task pair counts once
    starts = np.concatenate([[0], np.cumsum(benchmark_sizes)[:-1]]).astype(np.int64)
    groups = [np.arange(start, start + size) for start, size in zip(starts, benchmark_sizes)]
    return bootstrap_share(incidence, tasks["hours"].to_numpy(dtype=float), groups, threshold, replicates=replicates,
                           rng=np.random.default_rng(seed), progress=progress)


def uncovered_share(counts: np.ndarray, hours: np.ndarray, threshold: int) -> float:
    """Share of the hours (tasks with hours only) on tasks with fewer than `threshold` prompts."""
    has_hours = ~np.isnan(hours)
    return float(hours[has_hours & (counts < threshold)].sum() / hours[has_hours].sum())


def _range_start(members: np.ndarray) -> int | None:
    """The first of `members` when they are consecutive integers in order (start, start+1, …), else None."""
    if len(members) == 0 or not np.issubdtype(members.dtype, np.integer):
        return None
    start = int(members[0])
    return start if np.array_equal(members, np.arange(start, start + len(members), dtype=members.dtype)) else None


def _equal_size_runs(groups: list[np.ndarray]) -> list[tuple[int, np.ndarray | None, np.ndarray]]:
    """`groups` as runs of consecutive groups of one size: (the size n, every member of the run in
    order or None when they are one range, and each draw's shift). A run's draws are one call
    `rng.integers(0, n, size=len(run) * n)`, shifted: the group's start added to its own n of them
    (a range), or its offset in the run (members, gathered). The same array as one call of n per
    group: the generator draws each bounded integer from its own 32-bit outputs, so the stream does
    not see where one call ends (a thousand calls a replicate were most of the bootstrap at a
    thousand benchmarks)."""
    runs: list[tuple[int, np.ndarray | None, np.ndarray]] = []
    i = 0
    while i < len(groups):
        n = len(groups[i])
        j = i
        while j < len(groups) and len(groups[j]) == n:
            j += 1
        run = groups[i:j]
        starts = [_range_start(members) for members in run]
        if all(start is not None for start in starts):
            runs.append((n, None, np.repeat(np.asarray(starts, dtype=np.int64), n)))
        else:
            members = np.concatenate(run) if n else np.zeros(0, np.int64)
            runs.append((n, members, np.repeat(np.arange(len(run), dtype=np.int64) * n, n)))
        i = j
    return runs


def bootstrap_share(incidence, hours: np.ndarray, groups: list[np.ndarray], threshold: int, *, replicates: int, rng, progress=None) -> dict:
    """The bootstrap of `uncovered_share` over a prompt x task incidence matrix, prompts resampled
    within `groups` (benchmarks); the estimate, every interval of `bootstrap_intervals` and the
    replicates."""
    n_prompts = incidence.shape[0]
    shares = np.empty(replicates)
    runs = _equal_size_runs(groups)
    # A 0/1 incidence (bootstrap_uncovered_share's) counts in whole numbers, transposed once (tasks x
    # prompts, read row by row): the same counts as the product of floats (sums of whole numbers,
    # exact in any order), and at a million prompts 2.6 ms a replicate against 6.3 ms (int32: no
    # task's count exceeds the draws). Counting in a second thread while this one draws did not pay
    # on the two shared cores (3.2 s against 3.7 s for the 200 replicates, medians of three).
    whole, by_task = float, incidence.T
    if np.isin(incidence.data, (0.0, 1.0)).all():
        whole = np.int32 if n_prompts < 2**31 else np.int64
        by_task = incidence.T.tocsr().astype(whole)
    # Every replicate's draws go to one buffer, each run to its own slice, in the order they are drawn:
    # the array the runs' draws concatenated made, without a copy of each and of their concatenation
    # (at a million prompts 6.2 to 7.8 ms a replicate with the count, against 9.1 to 13.3).
    drawn = np.empty(sum(len(shift) for _, _, shift in runs), dtype=np.int64)
    ends = np.cumsum([len(shift) for _, _, shift in runs], dtype=np.int64)
    meter = progress("bootstrap of the uncovered work-time share", replicates, "replicates") if progress is not None else None
    for r in range(replicates):
        # The draws of every benchmark, counted once (a count per benchmark was n_prompts long each);
        # `members[rng.integers(0, n, n)]` is what `rng.choice(members, n)` draws, without its checks,
        # and `start + rng.integers(0, n, n)` what it draws from start..start+n-1.
        for (n, members, shift), end in zip(runs, ends):
            at = drawn[end - len(shift):end]
            if members is None:
                np.add(rng.integers(0, n, size=len(shift)), shift, out=at)
            else:
                at[:] = members[rng.integers(0, n, size=len(shift)) + shift]
        weights = np.bincount(drawn, minlength=n_prompts).astype(whole)
        shares[r] = uncovered_share(by_task @ weights, hours, threshold)
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
    # The normal quantile and distribution function as scipy.special's ndtri and ndtr, which scipy.stats'
    # norm.ppf and norm.cdf compute (the same values, bit for bit): importing scipy.stats took 0.8 s of a
    # run whose model fits were all kept, at a million prompts.
    from scipy.special import ndtr, ndtri

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
    z0 = ndtri(np.clip(below, 0.5 / n, 1 - 0.5 / n))
    acceleration = 0.0
    if jackknife is not None and len(jackknife) > 1:
        d = jackknife.mean() - jackknife
        denominator = 6.0 * float((d**2).sum()) ** 1.5
        acceleration = float((d**3).sum() / denominator) if denominator > 0 else 0.0
    z = ndtri(np.array([alpha, 1 - alpha]))
    adjusted = ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
    bca_low, bca_high = np.percentile(shares, 100 * np.clip(adjusted, 0.0, 1.0))
    out.update({"ci_low_bca": float(bca_low), "ci_high_bca": float(bca_high), "bca_z0": float(z0), "bca_acceleration": acceleration})
    out["ci_low"], out["ci_high"] = out[f"ci_low_{REPORTED_INTERVAL}"], out[f"ci_high_{REPORTED_INTERVAL}"]
    out["method"] = INTERVAL_NOTE
    return out
