"""The judge's own uncertainty carried into the uncovered work-time share: the label-uncertainty band.

The headline counts prompts per task from one set of labels, and the resampling spread
(coverage.bootstrap_share) only asks which prompts a benchmark happened to contain. The larger
uncertainty is which tasks a prompt really exercises. The default judge ranks candidate occupations
for every prompt, with a probability for each, and labels tasks of the best one; its confidence is
that best occupation's probability. The band re-draws every labeled prompt's labels:

1. **Calibration.** The raw confidence is a softmax output, not a probability of being right. On
   the `tune` half of labels_dev (GDPval prompts the judge labeled; the half the judges were tuned
   on, never the holdout), a logistic regression of "the top label is in the authors' occupation"
   on logit(confidence) gives q = Λ(a + b·logit(c)), the calibrated probability that the prompt's
   labeled occupation is right (`fit_calibration`).
2. **Re-drawing.** In each draw, a prompt keeps its labels with probability q; otherwise its labels
   move to another of its candidate occupations, chosen in proportion to the judge's probability of
   each, and become that occupation's most similar candidate tasks, as many as the judge gave it (so
   the density of labels, which decides coverage, is kept). The calibration's own uncertainty is
   carried too: each draw takes (a, b) from the normal approximation of their sampling distribution.
3. **The band.** Each draw's coverage and uncovered share are computed as the headline's; the band
   is the 2.5% and 97.5% quantiles of the draws.

What it cannot see: a prompt whose right occupation is among none of its candidates (the candidates'
recall is measured in bench/judge_variants.json), wrong tasks within the right occupation, and how
far a calibration fitted on GDPval's prompts holds for the other benchmarks (`label_calibration`
reports the check on the reference set, which spans them). bench/label_band_coverage.py measures,
with known labels, how often the band covers the truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import sparse

from .coverage import task_counts, uncovered_share

EPS = 1e-6
BAND_LEVEL = 0.95


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), EPS, 1 - EPS)
    return np.log(p / (1 - p))


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class Calibration:
    """q = Λ(intercept + slope · logit(confidence)), with the covariance of (intercept, slope).

    `n` prompts were fitted, `n_correct` of them right; `fitted` is False when they could not be
    (fewer than MIN_CALIBRATION prompts, or all right or all wrong): the raw confidence is then used
    as it is (intercept 0, slope 1, no covariance), and the band says so."""

    intercept: float
    slope: float
    cov: np.ndarray
    n: int
    n_correct: int
    fitted: bool

    def probability(self, confidence) -> np.ndarray:
        return calibrated_probability(confidence, self.intercept, self.slope)


IDENTITY = Calibration(0.0, 1.0, np.zeros((2, 2)), 0, 0, False)
MIN_CALIBRATION = 10


def calibrated_probability(confidence, intercept: float, slope: float) -> np.ndarray:
    """Λ(intercept + slope · logit(confidence)); confidence clipped to [1e-6, 1 − 1e-6]."""
    return _expit(intercept + slope * _logit(confidence))


def fit_calibration(confidence, correct, *, max_iter: int = 50) -> Calibration:
    """Logistic regression of `correct` (0/1) on logit(confidence), by Newton's method; its covariance
    is the inverse of the information matrix at the estimate."""
    x = _logit(confidence)
    y = np.asarray(correct, dtype=float)
    n, n_correct = len(y), int(y.sum())
    if n < MIN_CALIBRATION or n_correct in (0, n):
        return Calibration(0.0, 1.0, np.zeros((2, 2)), n, n_correct, False)
    X = np.column_stack([np.ones(n), x])
    beta = np.zeros(2)
    for _ in range(max_iter):
        p = _expit(X @ beta)
        information = (X * (p * (1 - p))[:, None]).T @ X
        step = np.linalg.solve(information, X.T @ (y - p))
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    if not np.all(np.isfinite(beta)) or np.max(np.abs(beta)) > 50:  # separation: the fit ran away
        return Calibration(0.0, 1.0, np.zeros((2, 2)), n, n_correct, False)
    p = _expit(X @ beta)
    cov = np.linalg.inv((X * (p * (1 - p))[:, None]).T @ X)
    return Calibration(float(beta[0]), float(beta[1]), cov, n, n_correct, True)


def weak_prompts(judgements: pd.DataFrame, labels: pd.DataFrame, bars: tuple[float, float] | None) -> pd.DataFrame:
    """The labeled prompts the judge itself marks as weak: below one of its own abstention bars
    (confidence under `abstain_below`, or its rank-1 task's similarity under `min_similarity`), so
    labeled only because its benchmark had reached the abstention cap. `bars` is None for a judge
    without them (judge v3, the LLM judge): no prompt is marked. Columns benchmark, prompt_id."""
    if bars is None or judgements.empty:
        return pd.DataFrame({"benchmark": pd.Series(dtype="string"), "prompt_id": pd.Series(dtype="string")})
    abstain_below, min_similarity = bars
    first = labels[labels["rank"] == 1][["benchmark", "prompt_id", "score"]]
    labeled = judgements[judgements["status"] == "labeled"][["benchmark", "prompt_id", "confidence"]].merge(first, on=["benchmark", "prompt_id"])
    weak = (labeled["confidence"].astype(float) < abstain_below) | (labeled["score"].astype(float) < min_similarity)
    return labeled.loc[weak, ["benchmark", "prompt_id"]].reset_index(drop=True)


@dataclass
class LabelSets:
    """Every labeled prompt's possible label sets: its own (first), then one per other candidate
    occupation. `incidence` is sets x tasks (1 where the set holds the task, columns in the order of
    the task frame); `prompt` the prompt (0..n-1) of each set; `own` marks each prompt's own set;
    `share` each alternative's share of the probability of being wrong (its occupation's probability
    over the alternatives'); `confidence` each prompt's raw confidence."""

    incidence: sparse.csr_matrix
    prompt: np.ndarray
    own: np.ndarray
    share: np.ndarray
    confidence: np.ndarray

    @property
    def n_prompts(self) -> int:
        return len(self.confidence)

    def probabilities(self, q: np.ndarray) -> np.ndarray:
        """Each set's probability (sets x columns of q) when each prompt's own labels are right with
        probability q[prompt] (prompts x columns); a prompt without alternatives keeps its own."""
        keep = np.where(self.has_alternative[:, None], q, 1.0)[self.prompt]
        return np.where(self.own[:, None], keep, (1.0 - keep) * self.share[:, None])

    @cached_property
    def own_set(self) -> np.ndarray:
        """Each prompt's own set (sets are grouped by prompt, its own first)."""
        return np.flatnonzero(self.own)

    @cached_property
    def n_alternatives(self) -> np.ndarray:
        """Each prompt's alternative sets."""
        return np.bincount(self.prompt[~self.own], minlength=self.n_prompts)

    @cached_property
    def has_alternative(self) -> np.ndarray:
        return self.n_alternatives > 0

    @cached_property
    def alternative_bounds(self) -> np.ndarray:
        """prompts x (most alternatives of a prompt): each prompt's running sum of its alternatives'
        shares, the last one (and the padding after it) exactly 1.0."""
        alternative = ~self.own
        position = np.arange(len(self.own)) - self.own_set[self.prompt] - 1  # 0 for a prompt's first alternative
        width = int(position[alternative].max()) + 1 if alternative.any() else 1
        shares = np.zeros((self.n_prompts, width))
        shares[self.prompt[alternative], position[alternative]] = self.share[alternative]
        bounds = np.cumsum(shares, axis=1)
        bounds[np.arange(width)[None, :] >= (self.n_alternatives - 1)[:, None]] = 1.0
        return bounds

    def choose(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The set each prompt draws, with the probabilities of `probabilities(q)`: given u uniform on
        [0, 1) per prompt, its own set when u <= q (always, for a prompt without alternatives), else the
        alternative whose interval of the running share sum holds (u - q) / (1 - q). Per prompt, not
        per set: at a million prompts a draw over every set took 84 ms, 200 times."""
        keep = np.where(self.has_alternative, q, 1.0)
        chosen = self.own_set.copy()
        moved = np.flatnonzero(u > keep)
        if len(moved):
            within = (u[moved] - keep[moved]) / (1.0 - keep[moved])
            step = (self.alternative_bounds[moved] < within[:, None]).sum(axis=1)
            chosen[moved] += 1 + np.minimum(step, self.alternative_bounds.shape[1] - 1)
        return chosen


def label_sets(labels: pd.DataFrame, judgements: pd.DataFrame, candidates: pd.DataFrame, task_ids: np.ndarray) -> LabelSets:
    """The label sets of every prompt the judge labeled. `labels`: benchmark, prompt_id, task_id
    (one labeler); `judgements`: benchmark, prompt_id, status, confidence; `candidates`: benchmark,
    prompt_id, occupation_rank, occupation_probability, task_rank, task_id; `task_ids` the columns.
    An alternative set holds its occupation's first k candidate tasks, k the prompt's own labels."""
    key = ["benchmark", "prompt_id"]
    column = pd.Series(np.arange(len(task_ids)), index=pd.Index(np.asarray(task_ids, dtype=np.int64)))
    labeled = judgements.loc[judgements["status"] == "labeled", [*key, "confidence"]].sort_values(key).reset_index(drop=True)
    labeled["prompt"] = np.arange(len(labeled))
    own = labels[[*key, "task_id"]].merge(labeled[[*key, "prompt"]], on=key)
    own = own.assign(column=own["task_id"].astype("int64").map(column)).dropna(subset=["column"])
    k = own.groupby("prompt").size().reindex(labeled["prompt"], fill_value=0).to_numpy()
    alt = candidates.loc[candidates["occupation_rank"] > 1, [*key, "occupation_rank", "occupation_probability", "task_rank", "task_id"]]
    alt = alt.merge(labeled[[*key, "prompt"]], on=key)
    alt = alt[alt["task_rank"].to_numpy() <= k[alt["prompt"].to_numpy()]]
    alt = alt.assign(column=alt["task_id"].astype("int64").map(column)).dropna(subset=["column"])
    occupations = alt.groupby(["prompt", "occupation_rank"], as_index=False)["occupation_probability"].first()
    total = occupations.groupby("prompt")["occupation_probability"].transform("sum")
    count = occupations.groupby("prompt")["occupation_probability"].transform("size")
    occupations["share"] = np.where(total > 0, occupations["occupation_probability"] / total.where(total > 0, 1.0), 1.0 / count)
    sets = pd.concat(
        [pd.DataFrame({"prompt": labeled["prompt"], "occupation_rank": 0, "share": 0.0}), occupations[["prompt", "occupation_rank", "share"]]],
        ignore_index=True,
    ).sort_values(["prompt", "occupation_rank"], kind="stable").reset_index(drop=True)
    sets["set"] = np.arange(len(sets))
    set_of = sets.set_index(["prompt", "occupation_rank"])["set"]
    members = pd.concat(
        [own.assign(occupation_rank=0)[["prompt", "occupation_rank", "column"]], alt[["prompt", "occupation_rank", "column"]]], ignore_index=True
    )
    rows = set_of.reindex(pd.MultiIndex.from_frame(members[["prompt", "occupation_rank"]])).to_numpy()
    incidence = sparse.csr_matrix((np.ones(len(rows)), (rows, members["column"].astype("int64").to_numpy())), shape=(len(sets), len(task_ids)))
    incidence.data[:] = 1.0
    confidence = labeled["confidence"].astype(float).fillna(1.0).to_numpy()
    return LabelSets(incidence, sets["prompt"].to_numpy(dtype=np.int64), (sets["occupation_rank"] == 0).to_numpy(), sets["share"].to_numpy(dtype=float), confidence)


# The re-drawing holds a few sets x draws arrays at once (probabilities, their running sum, the
# uniforms, the choice): the draws go in chunks of columns that keep each such array near this many
# bytes, so memory stays flat as prompts grow (200 draws at once took 4.8 GB at 100,000 prompts).
DRAW_CHUNK_BYTES = 16 * 2**20


def draws_per_chunk(n_sets: int, draws: int, chunk_bytes: int = DRAW_CHUNK_BYTES) -> int:
    """How many draws (columns) one chunk of the re-drawing takes for `n_sets` label sets."""
    return max(1, min(draws, chunk_bytes // (8 * max(n_sets, 1))))


def draw_shares(sets: LabelSets, calibration: Calibration, hours: np.ndarray, occupation: np.ndarray, threshold: int, *,
                draws: int = 200, seed: int = 20261204, chunk_bytes: int = DRAW_CHUNK_BYTES) -> dict[str, np.ndarray]:
    """`draws` re-drawings of every labeled prompt's labels: per draw, the uncovered share of the
    hours (aligned to the incidence's task columns), the tasks labeled and covered, and the
    occupations (`occupation`: each task column's occupation code) with a covered task. The draws
    are made a chunk of columns at a time (draws_per_chunk), so memory does not grow with `draws`."""
    rng = np.random.default_rng(seed)
    if calibration.fitted:
        a, b = rng.multivariate_normal([calibration.intercept, calibration.slope], calibration.cov, size=draws).T
    else:
        a, b = np.full(draws, calibration.intercept), np.full(draws, calibration.slope)
    logit_confidence = _logit(sets.confidence)[:, None]
    n_tasks = sets.incidence.shape[1]
    own_counts = np.asarray(sets.incidence.T @ sets.own.astype(float))
    counts = np.empty((n_tasks, draws))  # tasks x draws
    step = draws_per_chunk(sets.incidence.shape[0], draws, chunk_bytes)
    for start in range(0, draws, step):
        columns = slice(start, min(start + step, draws))
        q = _expit(a[None, columns] + b[None, columns] * logit_confidence)
        u = rng.random((sets.n_prompts, q.shape[1]))
        for column in range(q.shape[1]):
            # A draw's counts are the own labels' counts, with the moved prompts' own sets taken out
            # and the sets they moved to put in.
            chosen = sets.choose(q[:, column], u[:, column])
            moved = chosen != sets.own_set
            added = np.bincount(sets.incidence[chosen[moved]].indices, minlength=n_tasks)
            removed = np.bincount(sets.incidence[sets.own_set[moved]].indices, minlength=n_tasks)
            counts[:, start + column] = own_counts + added - removed
    covered = counts >= threshold
    has_hours = ~np.isnan(hours)
    weights = np.where(has_hours, hours, 0.0)
    shares = (weights[:, None] * ~covered).sum(axis=0) / weights.sum()
    codes, occupation_index = np.unique(occupation, return_inverse=True)
    by_occupation = sparse.csr_matrix((np.ones(len(occupation_index)), (occupation_index, np.arange(len(occupation_index)))), shape=(len(codes), len(occupation_index)))
    occupations = (np.asarray(by_occupation @ covered.astype(float)) > 0).sum(axis=0)
    return {"share": shares, "tasks": covered.sum(axis=0), "occupations": occupations, "labeled": (counts > 0).sum(axis=0)}


def band(values: np.ndarray, level: float = BAND_LEVEL) -> tuple[float, float]:
    alpha = (1 - level) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


BAND_METHOD = (
    "label-uncertainty band: every labeled prompt's labels re-drawn from its candidates, kept with the judge's calibrated "
    "confidence (logistic on logit(confidence), fitted on labels_dev's tune half) or moved to another candidate occupation in "
    "proportion to the judge's probability of it; 2.5%-97.5% quantiles of the draws; not a confidence interval"
)


# How judge v7 words the reason of a personal errand's abstention (labeling/judges.py).
ERRAND_PREFIX = "personal errand:"


def _prompt_keys(frame: pd.DataFrame) -> pd.MultiIndex:
    """Each row's (benchmark, prompt_id), to test membership without a Python tuple per row."""
    return pd.MultiIndex.from_arrays([frame["benchmark"].to_numpy(), frame["prompt_id"].to_numpy()])


def abstention_table(labels: pd.DataFrame, judgements: pd.DataFrame, weak: pd.DataFrame, tasks: pd.DataFrame, threshold: int) -> pd.DataFrame:
    """Per benchmark and for all ('all'): prompts, not read (not English), judged, abstained, labeled,
    labeled below the judge's own bars (weak: labeled only because the benchmark reached its
    abstention cap, so a benchmark with any is at its cap), abstained as a personal errand (judge
    v7: outside the cap; `judgements` may lack `reason`, then 0); for all, the covered tasks that
    would not be covered without the weak labels."""
    # Each prompt's flags, summed per benchmark in one groupby (a filter per benchmark was 4 s at 1,000
    # benchmarks); the rows are then written as before, from the sums.
    status = judgements["status"]
    errand = judgements["reason"].fillna("").astype(str).str.startswith(ERRAND_PREFIX) if "reason" in judgements else pd.Series(False, index=judgements.index)
    flags = pd.DataFrame({
        "benchmark": judgements["benchmark"].to_numpy(),
        "n_prompts": 1,
        "n_not_read": (status == "unlabeled").fillna(False).to_numpy(dtype=bool),
        "n_judged": (status != "unlabeled").fillna(False).to_numpy(dtype=bool),
        "n_abstained": (status == "abstained").fillna(False).to_numpy(dtype=bool),
        "n_labeled": (status == "labeled").fillna(False).to_numpy(dtype=bool),
        "n_labeled_weak": _prompt_keys(judgements).isin(_prompt_keys(weak)),
        "n_abstained_errand": (errand & (status == "abstained")).fillna(False).to_numpy(dtype=bool),
    })
    sums = flags.groupby("benchmark", sort=True).sum()
    total = flags.drop(columns="benchmark").sum()
    rows = []
    for benchmark, row in [*zip(sums.index, sums.itertuples(index=False)), ("all", total)]:
        rows.append(
            {"benchmark": benchmark, "n_prompts": int(row.n_prompts), "n_not_read": int(row.n_not_read), "n_judged": int(row.n_judged),
             "n_abstained": int(row.n_abstained), "n_labeled": int(row.n_labeled), "n_labeled_weak": int(row.n_labeled_weak),
             "n_abstained_errand": int(row.n_abstained_errand),
             "share_abstained": np.int64(row.n_abstained) / int(row.n_judged) if int(row.n_judged) else float("nan")}
        )
    table = pd.DataFrame(rows)
    table["at_cap"] = table["n_labeled_weak"] > 0
    is_weak = _prompt_keys(labels).isin(_prompt_keys(weak))
    counts, without = task_counts(labels, tasks), task_counts(labels[~is_weak], tasks)
    only_with_weak = int(((counts >= threshold) & (without < threshold)).sum())
    table["n_tasks_covered_only_with_weak"] = pd.array([pd.NA] * (len(table) - 1) + [only_with_weak], dtype="Int64")
    return table


def uncertainty_tables(
    labels: pd.DataFrame, judgements: pd.DataFrame, candidates: pd.DataFrame, validation: pd.DataFrame, tasks: pd.DataFrame,
    labeler: str, threshold: int, bars: tuple[float, float] | None = None, *, draws: int = 200,
) -> dict[str, pd.DataFrame]:
    """analysis.label_calibration, analysis.work_time_uncovered_band and analysis.abstention_by_benchmark
    for the active labeler.

    `labels`: benchmark, prompt_id, task_id, rank, score; `judgements`: benchmark, prompt_id, status,
    confidence; `validation`: yardstick, subset, benchmark, prompt_id, n_labels, occupation_top1
    (the labeler's rows of marts.fct_judge_validation_prompts); `tasks`: task_id, onet_soc_code,
    hours; `bars`: the judge's (abstain_below, min_similarity), None for a judge without them."""
    conf = judgements[["benchmark", "prompt_id", "confidence"]]
    scored = validation.merge(conf, on=["benchmark", "prompt_id"], how="left")
    scored = scored[(scored["n_labels"] > 0) & scored["occupation_top1"].notna() & scored["confidence"].notna()]
    tune = scored[(scored["yardstick"] == "labels_dev") & (scored["subset"] == "tune")]
    calibration = fit_calibration(tune["confidence"].astype(float), tune["occupation_top1"].astype(bool))
    calibration_rows = []
    for (yardstick, subset), group in scored.groupby(["yardstick", "subset"]):
        c = group["confidence"].astype(float).to_numpy()
        calibration_rows.append(
            {
                "labeler": labeler, "yardstick": yardstick, "subset": subset, "n_prompts": len(group),
                "observed_occupation_top1": float(group["occupation_top1"].astype(bool).mean()),
                "mean_confidence": float(c.mean()), "mean_calibrated": float(calibration.probability(c).mean()),
                "fitted_on": yardstick == "labels_dev" and subset == "tune",
            }
        )
    calibration_table = pd.DataFrame(
        calibration_rows,
        columns=["labeler", "yardstick", "subset", "n_prompts", "observed_occupation_top1", "mean_confidence", "mean_calibrated", "fitted_on"],
    )
    calibration_table = calibration_table.assign(
        intercept=calibration.intercept, slope=calibration.slope, intercept_se=float(np.sqrt(calibration.cov[0, 0])),
        slope_se=float(np.sqrt(calibration.cov[1, 1])), fitted=calibration.fitted,
    )
    ordered = tasks.sort_values("task_id").reset_index(drop=True)
    hours = ordered["hours"].to_numpy(dtype=float)
    sets = label_sets(labels, judgements, candidates, ordered["task_id"].to_numpy())
    observed = sets.incidence.T @ sets.own.astype(float)
    point = uncovered_share(observed, hours, threshold) if len(ordered) else float("nan")
    row = {"threshold": threshold, "labeler": labeler, "share_uncovered": point, "band_low": float("nan"), "band_high": float("nan"),
           "draws_mean": float("nan"), "n_tasks_covered_low": pd.NA, "n_tasks_covered_high": pd.NA, "n_occupations_low": pd.NA,
           "n_occupations_high": pd.NA, "n_tasks_labeled": int((observed > 0).sum()), "n_tasks_covered": int((observed >= threshold).sum()),
           "tasks_labeled_mean": float("nan"), "draws": 0, "prompts_labeled": sets.n_prompts,
           "prompts_with_alternatives": int(len(np.unique(sets.prompt[~sets.own]))),
           "mean_calibrated_confidence": float(calibration.probability(sets.confidence).mean()) if sets.n_prompts else float("nan"),
           "calibration_fitted": calibration.fitted, "method": BAND_METHOD}
    if sets.n_prompts and len(candidates):
        drawn = draw_shares(sets, calibration, hours, ordered["onet_soc_code"].to_numpy(), threshold, draws=draws)
        row.update(
            {"band_low": band(drawn["share"])[0], "band_high": band(drawn["share"])[1], "draws_mean": float(drawn["share"].mean()),
             "n_tasks_covered_low": int(np.floor(band(drawn["tasks"])[0])), "n_tasks_covered_high": int(np.ceil(band(drawn["tasks"])[1])),
             "n_occupations_low": int(np.floor(band(drawn["occupations"])[0])), "n_occupations_high": int(np.ceil(band(drawn["occupations"])[1])),
             "tasks_labeled_mean": float(drawn["labeled"].mean()), "draws": draws}
        )
    band_table = pd.DataFrame([row]).astype(
        {"n_tasks_covered_low": "Int64", "n_tasks_covered_high": "Int64", "n_occupations_low": "Int64", "n_occupations_high": "Int64"}
    )
    abstention = abstention_table(labels, judgements, weak_prompts(judgements, labels, bars), ordered, threshold)
    return {"label_calibration": calibration_table, "work_time_uncovered_band": band_table, "abstention_by_benchmark": abstention}
