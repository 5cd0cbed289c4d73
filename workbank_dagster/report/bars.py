"""The judges' quality bars, defined once.

The labeling issue set them on the held-out half of labels_dev (the `holdout` half of
reference/labels_dev_split.csv, whose occupations no judge was tuned on). The README's validation
table, the report's banner and its Limitations section all read them from here, and every one of
them compares them with held-out figures only (headline.json's `holdout_*`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Bar:
    label: str  # what is measured, in words
    text: str  # the bar as printed: "≥ 0.80"
    value: float
    at_least: bool  # True: the figure must reach the value; False: stay at or below it
    headline_key: str  # the held-out figure's key in headline.json

    def met(self, figure: float) -> bool:
        return figure >= self.value if self.at_least else figure <= self.value


def _bar(label: str, value: float, at_least: bool, headline_key: str, fmt: Callable[[float], str] = lambda v: f"{v:.2f}") -> Bar:
    return Bar(label, f"{'≥' if at_least else '≤'} {fmt(value)}", value, at_least, headline_key)


# (benchmark, level, metric) of marts.fct_judge_validation -> the bar, in the README's order.
BARS: dict[tuple[str, str, str], Bar] = {
    ("gdpval", "family", "top1"): _bar("GDPval family top-1", 0.80, True, "holdout_gdpval_family_top1"),
    ("gdpval", "occupation", "top1"): _bar("GDPval occupation top-1", 0.55, True, "holdout_gdpval_occupation_top1"),
    ("gdpval", "occupation", "precision"): _bar("GDPval occupation precision", 0.50, True, "holdout_gdpval_occupation_precision"),
    ("gdpval", "all", "labels_per_labeled_prompt"): _bar("labels per labeled GDPval prompt", 3, False, "holdout_gdpval_labels_per_labeled_prompt", lambda v: f"{v:g}"),
    ("theagentcompany", "family", "top1"): _bar("TheAgentCompany family top-1", 0.70, True, "holdout_theagentcompany_family_top1"),
}
# The one family bar: below it, coverage counts are approximate (the report's banner says so).
FAMILY_BAR = BARS[("gdpval", "family", "top1")]
