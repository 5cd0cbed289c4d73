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

Step 1 is calibration.py's, steps 2 and 3 label_draws.py's. This module makes the step's tables
(`uncertainty_tables`: the calibration, the band, the abstentions per benchmark) and marks the
labels the judge itself holds weak (`weak_prompts`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .calibration import fit_calibration
from .coverage import task_counts, task_positions, uncovered_share
from .keys import PACKED_LIMIT, distinct_pairs, packed_pairs
from .label_draws import band, draw_shares, label_sets


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


def _among_weak(frames: list[pd.DataFrame], weak: pd.DataFrame) -> list[np.ndarray]:
    """Whether each row of each frame has its (benchmark, prompt_id) among `weak`'s. Integer codes
    (the step's) are packed to one integer a row and hashed: at a million prompts the MultiIndex of
    the 1.0 M judgements and 2.3 M labels and their isin took 0.6 s, the packed keys 0.06."""
    if weak.empty:
        return [np.zeros(len(frame), dtype=bool) for frame in frames]
    packed = packed_pairs(*[(frame["benchmark"].to_numpy(), frame["prompt_id"].to_numpy()) for frame in (weak, *frames)])
    if packed is None:
        return [_prompt_keys(frame).isin(_prompt_keys(weak)) for frame in frames]
    return [pd.Series(keys).isin(packed[0]).to_numpy() for keys in packed[1:]]


def _counts_with_and_without(labels: pd.DataFrame, tasks: pd.DataFrame, left_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """coverage.task_counts of `labels` and of `labels` without the rows `left_out` marks: distinct
    prompts per task, aligned to the rows of `tasks`. Integer codes (the step's) count the distinct
    (prompt, task) pairs by keys.distinct_pairs over one packing of the rows: at a million prompts the
    two task_counts of 2.3 M labels (a drop_duplicates of (task, benchmark, prompt) each) took 2.1 s
    profiled, this 0.17; with _among_weak abstention_table went from 1.09 s to 0.30 (medians of three)."""
    prompt = packed_pairs((labels["benchmark"].to_numpy(), labels["prompt_id"].to_numpy()))
    if prompt is None or labels.empty or not tasks["task_id"].is_unique:
        return task_counts(labels, tasks), task_counts(labels[~left_out], tasks)
    column = task_positions(labels["task_id"], tasks)
    if int(prompt[0].max()) >= PACKED_LIMIT // max(len(tasks), 1):
        return task_counts(labels, tasks), task_counts(labels[~left_out], tasks)

    def counts(kept: np.ndarray) -> np.ndarray:
        if not kept.any():
            return np.zeros(len(tasks), dtype=np.int64)
        pairs, low, radix = distinct_pairs(prompt[0][kept], column[kept])
        return np.bincount(pairs % radix + low, minlength=len(tasks))

    placed = column >= 0
    return counts(placed), counts(placed & ~left_out)


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
    judged_weak, is_weak = _among_weak([judgements, labels], weak)
    flags = pd.DataFrame({
        "benchmark": judgements["benchmark"].to_numpy(),
        "n_prompts": 1,
        "n_not_read": (status == "unlabeled").fillna(False).to_numpy(dtype=bool),
        "n_judged": (status != "unlabeled").fillna(False).to_numpy(dtype=bool),
        "n_abstained": (status == "abstained").fillna(False).to_numpy(dtype=bool),
        "n_labeled": (status == "labeled").fillna(False).to_numpy(dtype=bool),
        "n_labeled_weak": judged_weak,
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
    counts, without = _counts_with_and_without(labels, tasks, is_weak)
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
           # The prompts with an alternative set: those of np.unique(sets.prompt[~sets.own]), without
           # hashing 3.5 M sets at a million prompts (0.65 s profiled; the draws count them anyway).
           "prompts_with_alternatives": int(sets.has_alternative.sum()),
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
