"""Where the figures stop: the limitations the report's section and the README's block both state,
as plain sentences built from the run's outputs (headline.json and the report's frames, tables.py).

Each limitation has a key, a title, its text, and the section of the report that says more. No
figure is typed here: a limitation whose figures the run did not produce is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from . import intervals
from .bars import FAMILY_BAR
from .formats import isnan as _isnan
from .formats import pct as _pct


@dataclass(frozen=True)
class Limit:
    key: str
    title: str
    text: str
    section: str  # the report's anchor that says more


def _n(value) -> str:
    return "—" if _isnan(value) else f"{int(value):,}"


def _frame(frames: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    frame = frames.get(name)
    return frame if frame is not None else pd.DataFrame()


def _reference(validation: pd.DataFrame, labeler: str, level: str) -> float | None:
    if validation.empty:
        return None
    hit = validation[(validation["labeler"] == labeler) & (validation["yardstick"] == "reference") & (validation["subset"] == "holdout")
                     & (validation["level"] == level) & (validation["metric"] == "precision")]
    return None if hit.empty else float(hit.iloc[0]["value"])


def _errands(row) -> int:
    """A benchmark's abstentions on personal errands (judge v7), which the abstention cap leaves out."""
    value = getattr(row, "n_abstained_errand", 0)
    return 0 if value is None or _isnan(value) else int(value)


def _intent(validation: pd.DataFrame, labeler: str) -> str:
    """The benchmark-intent yardstick's held-out mean top-1, in words, where it was scored."""
    if validation.empty or not {"benchmark", "metric", "subset"} <= set(validation.columns):
        return ""
    hit = validation[(validation["labeler"] == labeler) & (validation["yardstick"] == "intent") & (validation["subset"] == "holdout")
                     & (validation["benchmark"] == "all") & (validation["metric"] == "top1_plausible")]
    if hit.empty:
        return ""
    return (f" On the benchmarks of the intent yardstick it was not tuned on, {_pct(float(hit.iloc[0]['value']))} of a benchmark's labeled "
            "prompts (the mean over benchmarks) have a top label in an occupation whose work the benchmark's paper asks for.")


def band_position(band: pd.Series) -> str:
    """Where the headline's estimate lies against the label-uncertainty band, and why, in words."""
    if _isnan(band.get("band_low")):
        return ""
    share, low, high = band["share_uncovered"], band["band_low"], band["band_high"]
    if low <= share <= high:
        return "The estimate lies inside the band."
    side, sign = ("above", "more") if share > high else ("below", "fewer")
    effect = "larger" if share > high else "smaller"
    return (f"The estimate, {_pct(share)}, lies {side} the band: re-drawn labels reach {sign} tasks ({band['tasks_labeled_mean']:,.0f} on average against "
            f"the judge's {_n(band['n_tasks_labeled'])}) and cover {_n(band['n_tasks_covered_low'])}–{_n(band['n_tasks_covered_high'])} against "
            f"{_n(band['n_tasks_covered'])}. The judge gathers a benchmark's prompts on {'fewer' if share > high else 'more'} tasks than its candidates "
            f"would; if its calibrated probabilities are right, its errors make the uncovered share look {effect} than it is.")


def limitations(h: Mapping, frames: Mapping[str, pd.DataFrame]) -> list[Limit]:
    """Every limitation the run's outputs let us state, in the order a reader needs them."""
    out: list[Limit] = []
    threshold = h.get("coverage_threshold")
    abstention = _frame(frames, "abstention")
    per_benchmark = abstention[abstention["benchmark"] != "all"] if len(abstention) else abstention
    everything = abstention[abstention["benchmark"] == "all"].iloc[0] if len(abstention) and (abstention["benchmark"] == "all").any() else None

    unread = per_benchmark[per_benchmark["n_not_read"] > 0] if len(per_benchmark) else per_benchmark
    if len(unread):
        which = "; ".join(f"{r.benchmark}: {_n(r.n_not_read)} of its {_n(r.n_prompts)} prompts ({_pct(r.n_not_read / r.n_prompts, 0)})"
                          for r in unread.itertuples())
        out.append(Limit("language", "Prompts not in English are left out",
                         f"{which} are not in English (Chinese script). The embedding model reads English only, so they are recorded "
                         "unlabeled and count for no task.", "benchmarks"))

    capped = per_benchmark[per_benchmark["at_cap"]] if len(per_benchmark) else per_benchmark
    if len(capped) and everything is not None:
        which = "; ".join(f"{r.benchmark} abstains on {_n(r.n_abstained - _errands(r))} of the {_n(r.n_judged)} prompts it read on weak evidence "
                          f"({_pct((r.n_abstained - _errands(r)) / r.n_judged, 0)}, its cap)"
                          + (f" and on {_n(_errands(r))} personal errands outside it" if _errands(r) else "")
                          + f", and {_n(r.n_labeled_weak)} of the {_n(r.n_labeled)} it labeled are below the judge's own bars"
                          for r in capped.itertuples())
        out.append(Limit("cap", "The abstention cap forces labels onto weak matches",
                         f"The judge may abstain on at most a fixed share of each benchmark's prompts, so that abstaining cannot buy precision. "
                         f"{which}: labeled only because the cap was reached. Those weak labels alone lift "
                         f"{_n(everything.n_tasks_covered_only_with_weak)} of the {_n(h.get('n_tasks_covered'))} covered tasks over the threshold.",
                         "judges"))

    imputed = _frame(frames, "imputed_hours")
    if len(imputed) and not _isnan(imputed.iloc[0]["share_imputed"]):
        out.append(Limit("time_shares", "Some work time rests on imputed time shares",
                         f"{_pct(imputed.iloc[0]['share_imputed'])} of US work hours are on the {_n(imputed.iloc[0]['n_tasks_imputed'])} tasks whose time "
                         "share is imputed (no estimate of their own in Hatgis-Kessell et al.: the occupation's median share, or shares in "
                         "proportion to importance).", "work-time"))

    sizes = _frame(frames, "benchmarks")
    by_benchmarks = _frame(frames, "covered_by_benchmarks")
    if len(sizes) and sizes["n_prompts"].min() > 0:
        largest, smallest = sizes.loc[sizes["n_prompts"].idxmax()], sizes.loc[sizes["n_prompts"].idxmin()]
        single = by_benchmarks.loc[by_benchmarks["n_benchmarks"] == 1, "n_tasks"].sum() if len(by_benchmarks) else None
        top3 = sizes["n_prompts"].nlargest(3).sum() / sizes["n_prompts"].sum()
        out.append(Limit("sizes", "Large benchmarks dominate",
                         f"Benchmark sizes differ {largest.n_prompts / smallest.n_prompts:.0f}-fold ({largest.benchmark} {_n(largest.n_prompts)} prompts, "
                         f"{smallest.benchmark} {_n(smallest.n_prompts)}), and the threshold counts prompts: the three largest hold {_pct(top3, 0)} of "
                         f"the prompts, and {_n(single)} of the {_n(h.get('n_tasks_covered'))} covered tasks draw all their prompts from one benchmark.",
                         "history"))

    validation = _frame(frames, "validation")
    labeler = h.get("labeler")
    family = h.get(FAMILY_BAR.headline_key)
    if family is not None:
        task, occupation = _reference(validation, labeler, "task"), _reference(validation, labeler, "occupation")
        reference = (f" On the reference set's half it was not tuned on, {_pct(task)} of its labels are a task the careful reading chose and "
                     f"{_pct(occupation)} are in one of its occupations.") if task is not None else ""
        out.append(Limit("precision", "The labels are often wrong",
                         f"On the half of labels_dev it was not tuned on, the judge's top label is in the GDPval authors' family for {_pct(family)} of "
                         f"prompts (the bar is {_pct(FAMILY_BAR.value, 0)}) and in their occupation for {_pct(h.get('holdout_gdpval_occupation_top1'))}."
                         f"{reference}{_intent(validation, labeler)} The errors are not random: they fall on neighbouring occupations and on "
                         "the domain of a benchmark's data rather than the work it asks for, so they cannot be assumed to flatten both ratios "
                         "towards 1; how they move the ratios has not been measured.", "judges"))

    judges = set(validation["labeler"]) if len(validation) else set()
    if not any(str(j).startswith("llm:") for j in judges):
        out.append(Limit("llm", "The article's own method has not been run",
                         "The LLM judge (a chat model choosing tasks among the candidates, as the article did) needs an API key and has not been "
                         "run here: every figure is the embedded judge's, whose labels are far from a careful reader's.", "judges"))

    ratios = _frame(frames, "ratios")
    importance = ratios[(ratios["ratio"] == "importance") & (ratios["kind"] == "adjusted") & (ratios["threshold"] == threshold)] if len(ratios) else ratios
    if len(importance):
        r = importance.iloc[0]
        out.append(Limit("importance", f"The importance ratio rests on {_pct(r.n_occupations / h['n_occupations'], 0)} of the occupations",
                         f"The fixed-effects model keeps the {_n(r.n_occupations)} of {_n(h.get('n_occupations'))} occupations whose rated tasks are "
                         f"neither all covered nor all uncovered: {_n(r.occupations_none_covered + r.occupations_all_covered)} leave, perfectly "
                         f"predicted, and {_n(r.occupations_without_ratings)} have no importance ratings.", "like-for-like"))
    simple = ratios[(ratios["ratio"] == "exposure") & (ratios["kind"] == "simple") & (ratios["threshold"] == threshold)] if len(ratios) else ratios
    if len(simple) and h.get("exposure_coverage_ratio") is not None:
        out.append(Limit("kinds", "Our adjusted ratio is not the article's simple one",
                         f"The exposure ratio of the headline, {h['exposure_coverage_ratio']:.2f}×, is adjusted for the wage bill; the article's ≈ 6× "
                         f"reads as a simple ratio, which in our data is {simple.iloc[0]['estimate']:.2f}×. Both kinds, at every threshold, are "
                         "in the like-for-like table.", "like-for-like"))

    spread = intervals.describe(h, "work_time_share_uncovered", _pct)
    band = intervals.describe(h, intervals.LABEL_BAND_PREFIX, _pct)
    calibration = _frame(frames, "calibration")
    if band:
        tune = calibration[calibration["fitted_on"]] if len(calibration) else calibration
        fitted = f", calibrated on {_n(tune.iloc[0]['n_prompts'])} GDPval prompts of the tune half" if len(tune) else ""
        check = calibration[(calibration["yardstick"] == "reference") & (calibration["subset"] == "holdout")] if len(calibration) else calibration
        transfer = (f" On the reference set's held-out half, which spans other benchmarks, the calibrated probabilities predict "
                    f"{_pct(check.iloc[0]['mean_calibrated'], 0)} of top labels in the right occupation; {_pct(check.iloc[0]['observed_occupation_top1'], 0)} "
                    "are.") if len(check) else ""
        position = band_position(_frame(frames, "band").iloc[0]) if len(_frame(frames, "band")) else ""
        out.append(Limit("uncertainty", "What the intervals on the uncovered share carry",
                         f"The {spread} asks only which prompts each benchmark happens to contain. The {band}{fitted}, re-draws every prompt's "
                         f"labels; it cannot see a right occupation outside a prompt's candidates, or wrong tasks within the right one. "
                         f"{position}{transfer}", "sensitivity"))

    scores = _frame(frames, "score_differences")
    if len(scores) and "n_prompts_weak" in scores and scores["n_prompts_weak"].notna().any():
        weak_rows = scores[scores["n_prompts_weak"].fillna(0) > 0]
        if len(weak_rows):
            groups = weak_rows.groupby(["benchmark", "title"], sort=False)
            which = "; ".join(f"{len(g)} rows of {benchmark} scored as {title} ({_n(g['n_prompts_weak'].iloc[0])} of their {_n(g['n_prompts'].iloc[0])} "
                              "prompts weak)" for (benchmark, title), g in groups)
            out.append(Limit("scores", "Some model-score rows rest on weak labels",
                             f"{_n(len(weak_rows))} of the {_n(len(scores))} largest differences between weighted and simple scores rest partly on "
                             f"prompts whose labels the judge itself marks as weak: {which}. The table marks them.", "scores"))
    return out

