"""Like for like with the article: its published figures beside ours, as rows that the report and
the README both render (page.py as HTML, readme.py as Markdown).

The article (docs/method.md §4; `seeds/` in the shared folder, in Chinese translation) states: 208 of 923
occupations have a task with at least 5 prompts, 6 of 22 families have none, about 90% of US work
time is on tasks with little or no coverage, exposed tasks are "about 6 times" as likely to be in
benchmarks as not exposed ones (said before any model, so read here as a simple ratio), the most
important tasks are "about 6-10 times" as likely as the least important "after controlling for
occupation and AI exposure" (an adjusted ratio), and, "even after controlling for AI exposure",
tasks of occupations with a larger wage bill are "significantly over-represented". It counts
18,797 O*NET tasks in 923 occupations and 29 benchmarks; of those its text names one, Mercor's APEX
(APEX-1 and APEX-Agents), and leaves the list to a "Benchmark Index" tab the translation does not
hold. Only figures of the article are typed here; every figure of ours comes from the run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from . import intervals
from .formats import isnan as _isnan
from .formats import num
from .formats import pct as _pct

ARTICLE = {
    "benchmarks": 29,
    "tasks": 18_797,
    "occupations": "208 of 923",
    "families_without": "6 of 22",
    "uncovered": "≈ 90% (on tasks with little or no coverage)",
    "exposure_ratio": "≈ 6× (stated before any model: read as simple)",
    "importance_ratio": "6–10× (after controlling for occupation and exposure: adjusted)",
    "wage_bill": "\"significantly over-represented\", controlling for exposure (no estimate given)",
}
Z95 = 1.959963984540054
# The benchmarks the article's text names that we lack, and where it names them.
NAMED_MISSING = {"APEX (Mercor's APEX-1 and APEX-Agents)": "named in its section on O*NET-weighted scores"}


def _num(value, digits: int = 2) -> str:
    return num(value, digits)


def _ratio(row) -> str:
    if row is None or _isnan(row["estimate"]):
        return "—"
    interval = "" if _isnan(row["ci_low"]) else f" ({intervals.CLUSTERED_WALD.describe(_num(row['ci_low']), _num(row['ci_high']))})"
    return f"{_num(row['estimate'])}×{interval}"


def _row(ratios: pd.DataFrame, ratio: str, threshold: int, kind: str):
    hit = ratios[(ratios["ratio"] == ratio) & (ratios["threshold"] == threshold) & (ratios["kind"] == kind)] if len(ratios) else ratios
    return None if hit is None or hit.empty else hit.iloc[0]


def wage_bill_finding(coefs: pd.DataFrame) -> str:
    """The article's second finding in our data, in words: the log wage bill's coefficient in the
    exposure logit as the change in the odds of coverage per doubling of the wage bill."""
    hit = coefs[coefs["term"] == "log_wage_bill"] if len(coefs) else coefs
    if hit.empty or _isnan(hit.iloc[0]["estimate"]):
        return "not estimable in this run"
    beta, se, p = (float(hit.iloc[0][c]) for c in ("estimate", "std_error", "p_value"))
    odds = lambda b: math.exp(b * math.log(2))  # noqa: E731
    low, high = odds(beta - Z95 * se), odds(beta + Z95 * se)
    direction = "more" if beta > 0 else "less"
    return (f"holding exposure fixed, a task is {direction} likely to be covered the larger its occupation's wage bill: each doubling of the "
            f"wage bill multiplies the odds of coverage by {_num(odds(beta))} ({intervals.CLUSTERED_WALD.describe(_num(low), _num(high))}; "
            f"p = {p:.3f})")


def like_for_like(h: Mapping, frames: Mapping[str, pd.DataFrame], *, compact: bool = False) -> list[tuple[str, str, str]]:
    """(what, ours, the article's) rows, every figure of ours from the run. `compact` (the README, whose
    headline table already sets occupations, families and work time beside the article's): the
    benchmarks, the task count, and each ratio simple and adjusted in one row."""
    ratios = frames.get("ratios", pd.DataFrame())
    threshold = h.get("coverage_threshold")
    importance = _row(ratios, "importance", threshold, "adjusted")
    n_occupations = _num(h.get("n_occupations"), 0)
    kept = (f"on {_num(importance['n_occupations'], 0)} of {n_occupations} occupations: "
            f"{_num(importance['occupations_none_covered'] + importance['occupations_all_covered'], 0)} with all or none of their tasks covered "
            f"and {_num(importance['occupations_without_ratings'], 0)} without importance ratings leave") if importance is not None else ""
    missing = max(ARTICLE["benchmarks"] - int(h.get("n_benchmarks") or 0), 0)
    named = "; ".join(f"{name}, {where}" for name, where in NAMED_MISSING.items())
    benchmarks = ("benchmarks", f"{_num(h.get('n_benchmarks'), 0)}: at least {missing} of the article's are missing; its text names one, {named}; "
                                "the others are in a tab the text we hold leaves out", str(ARTICLE["benchmarks"]))
    tasks = ("O*NET tasks", f"{_num(h.get('n_tasks'), 0)}: O*NET 29.3's task statements, as many distinct task IDs; the file's text export has "
                            f"{_num((h.get('n_tasks') or 0) + 1, 0)} lines with its header. The article names no release", f"{ARTICLE['tasks']:,}")
    exposure_simple, exposure_adjusted = _ratio(_row(ratios, "exposure", threshold, "simple")), _ratio(_row(ratios, "exposure", threshold, "adjusted"))
    importance_simple, importance_adjusted = _ratio(_row(ratios, "importance", threshold, "simple")), _ratio(importance)
    wage = ("larger wage bill, controlling for exposure", wage_bill_finding(frames.get("coverage_coefs", pd.DataFrame())), ARTICLE["wage_bill"])
    if compact:
        return [
            benchmarks,
            tasks,
            ("exposed / not exposed: simple; adjusted at the median wage bill", f"{exposure_simple}; {exposure_adjusted}", ARTICLE["exposure_ratio"]),
            ("most / least important quintile: simple; adjusted for occupation", f"{importance_simple}; {importance_adjusted}" + (f", {kept}" if kept else ""),
             ARTICLE["importance_ratio"]),
            wage,
        ]
    spread = intervals.describe(h, "work_time_share_uncovered", _pct)
    band = intervals.describe(h, intervals.LABEL_BAND_PREFIX, _pct)
    return [
        benchmarks,
        tasks,
        (f"occupations with a task covered (≥ {threshold} prompts)", f"{_num(h.get('n_occupations_with_covered_task'), 0)} of {n_occupations}",
         ARTICLE["occupations"]),
        ("families with no covered occupation", f"{_num(h.get('n_families_without_covered_occupation'), 0)} of {_num(h.get('n_families'), 0)}",
         ARTICLE["families_without"]),
        ("US work time on uncovered tasks", f"{_pct(h.get('work_time_share_uncovered'))}" + "".join(f"; {x}" for x in (spread, band) if x), ARTICLE["uncovered"]),
        ("exposed / not exposed, simple: P(covered | exposed) / P(covered | not)", exposure_simple, ARTICLE["exposure_ratio"]),
        ("exposed / not exposed, adjusted at the median wage bill", exposure_adjusted, "—"),
        ("most / least important quintile, simple", importance_simple, "—"),
        ("most / least important quintile, adjusted (occupation fixed effects)", importance_adjusted + (f"; {kept}" if kept else ""), ARTICLE["importance_ratio"]),
        wage,
    ]


def ratios_by_threshold(h: Mapping, frames: Mapping[str, pd.DataFrame]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: each ratio, simple and adjusted, at every threshold (the adjusted importance
    ratio with the occupations it rests on)."""
    ratios = frames.get("ratios", pd.DataFrame())
    if ratios is None or ratios.empty:
        return ["ratio"], []
    thresholds = sorted(int(t) for t in ratios["threshold"].unique())
    header = ["ratio", *(f"threshold {t}" + (" (headline)" if t == h.get("coverage_threshold") else "") for t in thresholds)]
    names = {("exposure", "simple"): "exposed / not, simple", ("exposure", "adjusted"): "exposed / not, adjusted (median wage bill)",
             ("importance", "simple"): "most / least important, simple", ("importance", "adjusted"): "most / least important, adjusted (occupations kept)"}
    rows = []
    for (ratio, kind), name in names.items():
        cells = [name]
        for t in thresholds:
            row = _row(ratios, ratio, t, kind)
            cell = "—" if row is None or _isnan(row["estimate"]) else f"{_num(row['estimate'])} ({_num(row['ci_low'])}–{_num(row['ci_high'])})"
            if ratio == "importance" and kind == "adjusted" and row is not None:
                cell += f"; {_num(row['n_occupations'], 0)}"
            cells.append(cell)
        rows.append(cells)
    return header, rows
