"""What each interval the project reports is, and what it may be called.

An interval is called a confidence interval ("95% CI") only where it has earned the name:
- a Wilson score interval (the judges' validation shares);
- a Wald interval from a cluster-robust covariance (the regression ratios: the delta method on the
  log ratio, standard errors clustered by SOC group);
- a bootstrap interval whose coverage, measured by simulation (bench/interval_coverage.py), is
  within 92–98%. The basic bootstrap interval of the uncovered work-time share covers 67%: it is a
  resampling spread, and its headline.json fields are `*_spread_low` / `*_spread_high`.

The label-uncertainty band of the uncovered share (analysis/uncertainty.py: labels re-drawn from the
judge's candidates) is a "band", its coverage measured by simulation in bench/label_band_coverage.json.
Any other interval (the normal interval of a mean number of labels per prompt) is a "95% interval",
never a CI. Each interval's headline.json fields carry its kind as their suffix (`_ci_`, `_spread_`,
`_band_`, `_interval_`), and `headline.json["intervals"]` names every interval's method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# The measured coverage a bootstrap interval needs before it may be called a 95% confidence interval.
BOOTSTRAP_CI_COVERAGE = (0.92, 0.98)


@dataclass(frozen=True)
class IntervalKind:
    kind: str  # "ci", "spread", "band" or "interval": the headline.json suffix, and what the text calls it
    method: str

    def keys(self, prefix: str) -> tuple[str, str]:
        """The headline.json fields of an interval around `prefix`."""
        return f"{prefix}_{self.kind}_low", f"{prefix}_{self.kind}_high"

    def describe(self, low: str, high: str) -> str:
        """The interval in words, named for what it is."""
        if self.kind == "ci":
            return f"95% CI {low}–{high}, {self.method}"
        if self.kind == "spread":
            return f"resampling spread {low}–{high} ({self.method}; not a confidence interval)"
        if self.kind == "band":
            return f"label-uncertainty band {low}–{high} ({self.method}; not a confidence interval)"
        return f"95% interval {low}–{high}, {self.method}"


WILSON = IntervalKind("ci", "Wilson")
CLUSTERED_WALD = IntervalKind("ci", "cluster-robust Wald, delta method")
BOOTSTRAP_SPREAD = IntervalKind("spread", "basic bootstrap, prompts resampled within benchmarks")
NORMAL_MEAN = IntervalKind("interval", "normal approximation to a mean")
LABEL_BAND = IntervalKind("band", "each prompt's labels kept or re-drawn from the judge's candidates by its calibrated probability of being right")
# The band's headline fields hang off a key of their own: work_time_share_uncovered has the spread.
LABEL_BAND_PREFIX = "work_time_share_uncovered_label"


def bootstrap_kind(coverage: float | None) -> IntervalKind:
    """A bootstrap interval is a CI only when its measured coverage is within the accepted band."""
    if coverage is not None and BOOTSTRAP_CI_COVERAGE[0] <= coverage <= BOOTSTRAP_CI_COVERAGE[1]:
        return IntervalKind("ci", "basic bootstrap, coverage measured by simulation")
    return BOOTSTRAP_SPREAD


# headline.json's intervals: the estimate's key, and the kind of its interval.
HEADLINE_INTERVALS: dict[str, IntervalKind] = {
    "work_time_share_uncovered": BOOTSTRAP_SPREAD,
    "exposure_coverage_ratio": CLUSTERED_WALD,
    "importance_top_bottom_ratio": CLUSTERED_WALD,
    "exposure_coverage_ratio_simple": CLUSTERED_WALD,
    "importance_top_bottom_ratio_simple": CLUSTERED_WALD,
    LABEL_BAND_PREFIX: LABEL_BAND,
    "holdout_gdpval_family_top1": WILSON,
    "holdout_gdpval_occupation_top1": WILSON,
    "holdout_gdpval_occupation_precision": WILSON,
    "holdout_gdpval_labels_per_labeled_prompt": NORMAL_MEAN,
    "holdout_theagentcompany_family_top1": WILSON,
    "holdout_abstained_share": WILSON,
}


def headline_fields(prefix: str, low, high) -> dict:
    """The two fields of an interval in headline.json, named by its kind."""
    low_key, high_key = HEADLINE_INTERVALS[prefix].keys(prefix)
    return {low_key: low, high_key: high}


def headline_methods() -> dict[str, dict[str, str]]:
    """headline.json["intervals"]: each interval's kind and method."""
    return {prefix: {"kind": kind.kind, "method": kind.method} for prefix, kind in HEADLINE_INTERVALS.items()}


def describe(headline: dict, prefix: str, fmt: Callable[[float], str]) -> str:
    """A headline interval in words ("" when it was not estimated)."""
    kind = HEADLINE_INTERVALS[prefix]
    low, high = (headline.get(key) for key in kind.keys(prefix))
    if low is None or high is None or low != low or high != high:
        return ""
    return kind.describe(fmt(low), fmt(high))
