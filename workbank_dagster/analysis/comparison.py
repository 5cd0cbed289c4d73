"""Both ratios as the article might have computed them and as the regressions do, at every threshold.

The article reports exposed tasks "about 6x as likely to be covered" and the most important tasks
"6-10x as likely" as the least important (docs/method.md §4) without saying whether those are plain
ratios of shares or model-adjusted ones. So each ratio is given both ways, at thresholds 1, 3, 5
and 10 (docs/method.md §4's sensitivity thresholds):

- **simple**: P(covered | exposed) / P(covered | not exposed), and P(covered | most important
  quintile) / P(covered | least important), straight from the task table. Its interval: the same
  ratio from a logit with that one regressor (a saturated model, whose fitted probabilities are the
  shares), SEs clustered by SOC group, delta method on the log ratio.
- **adjusted**: the regressions' ratios (regressions.py): exposure at the median wage bill, with
  log(wage bill) in the model; importance with occupation fixed effects, on the occupations whose
  tasks are neither all covered nor all uncovered (how many occupations that leaves, and why the
  others leave, is in the row).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .regressions import cluster_codes, coverage_logit, delta_ratio, fit_clustered_logit, importance_logit, importance_quintiles

COLUMNS = [
    "ratio", "threshold", "kind", "estimate", "ci_low", "ci_high", "p_high", "p_low", "n_tasks", "n_tasks_covered", "n_occupations",
    "occupations_all_covered", "occupations_none_covered", "occupations_without_ratings",
]


def _simple(covered: np.ndarray, high: np.ndarray, low: np.ndarray, groups: np.ndarray) -> tuple[float, float, float, float, float]:
    """P(covered | high) / P(covered | low) over the tasks in either group, with its clustered
    interval from the saturated logit; (ratio, low, high, p_high, p_low). NaNs where not estimable."""
    keep = high | low
    y, x, g = covered[keep].astype(float), high[keep].astype(float), groups[keep]
    nan = float("nan")
    if not keep.any() or len(np.unique(g)) < 2 or min(x.sum(), (1 - x).sum()) == 0:
        return nan, nan, nan, nan, nan
    p_high, p_low = float(y[x == 1].mean()), float(y[x == 0].mean())
    if p_low == 0 or p_high in (0.0, 1.0) or p_low == 1:
        return (p_high / p_low if p_low else nan), nan, nan, p_high, p_low
    result = fit_clustered_logit(y, pd.DataFrame({"const": 1.0, "high": x}), g)
    ratio, ci_low, ci_high = delta_ratio(np.array([1.0, 1.0]), np.array([1.0, 0.0]), np.asarray(result.params), np.asarray(result.cov_params()))
    return p_high / p_low, ci_low, ci_high, p_high, p_low


def threshold_ratios(tasks: pd.DataFrame, thresholds: tuple[int, ...], cluster_level: str = "major") -> pd.DataFrame:
    """Per threshold, both ratios both ways (COLUMNS). `tasks`: task_id, onet_soc_code, exposed,
    importance, wage_bill, n_prompts (the active labeler's)."""
    rows = []
    labeled = tasks.dropna(subset=["exposed"])
    exposed = labeled["exposed"].astype(bool).to_numpy()
    rated = tasks.dropna(subset=["exposed", "importance"]).copy()
    rated["quintile"] = importance_quintiles(rated)
    n_occupations = tasks["onet_soc_code"].nunique()
    without_ratings = n_occupations - rated["onet_soc_code"].nunique()
    for t in sorted(set(thresholds)):
        covered = tasks["n_prompts"].to_numpy() >= t
        mine = tasks.assign(covered=covered)
        # Exposure: simple over every task with an exposure label, adjusted at the median wage bill.
        c = covered[tasks["exposed"].notna().to_numpy()]
        simple = _simple(c, exposed, ~exposed, cluster_codes(labeled["onet_soc_code"], cluster_level).to_numpy())
        base = {"ratio": "exposure", "threshold": t, "n_occupations": labeled["onet_soc_code"].nunique()}
        rows.append({**base, "kind": "simple", **dict(zip(("estimate", "ci_low", "ci_high", "p_high", "p_low"), simple)),
                     "n_tasks": len(labeled), "n_tasks_covered": int(c.sum())})
        fit = coverage_logit(mine, cluster_level=cluster_level)
        usable = mine[mine["exposed"].notna() & mine["wage_bill"].gt(0)]
        rows.append({**base, "kind": "adjusted", "estimate": fit.ratio[0], "ci_low": fit.ratio[1], "ci_high": fit.ratio[2],
                     "n_tasks": fit.n_obs, "n_tasks_covered": int(usable["covered"].sum()), "n_occupations": usable["onet_soc_code"].nunique()})
        # Importance: simple over the rated tasks with an exposure label (the fixed-effects model's
        # tasks before occupations leave), adjusted with occupation fixed effects.
        rc = rated["n_prompts"].to_numpy() >= t
        quintile = rated["quintile"].to_numpy()
        simple = _simple(rc, quintile == 5, quintile == 1, cluster_codes(rated["onet_soc_code"], cluster_level).to_numpy())
        by_occupation = pd.Series(rc).groupby(rated["onet_soc_code"].to_numpy()).agg(["min", "max"])
        counts = {"occupations_all_covered": int((by_occupation["min"] == 1).sum()), "occupations_none_covered": int((by_occupation["max"] == 0).sum()),
                  "occupations_without_ratings": int(without_ratings)}
        base = {"ratio": "importance", "threshold": t}
        rows.append({**base, "kind": "simple", **dict(zip(("estimate", "ci_low", "ci_high", "p_high", "p_low"), simple)), "n_tasks": len(rated),
                     "n_tasks_covered": int(rc.sum()), "n_occupations": rated["onet_soc_code"].nunique(), **counts})
        imp = importance_logit(mine, cluster_level=cluster_level)
        rows.append({**base, "kind": "adjusted", "estimate": imp.ratio[0], "ci_low": imp.ratio[1], "ci_high": imp.ratio[2], "n_tasks": imp.n_obs,
                     "n_tasks_covered": int(rc[rated["onet_soc_code"].isin(by_occupation.index[by_occupation["min"] != by_occupation["max"]])].sum()),
                     "n_occupations": imp.occupations_kept, **counts})
    frame = pd.DataFrame(rows).reindex(columns=COLUMNS)
    return frame.astype({"threshold": "int64", "n_tasks": "Int64", "n_tasks_covered": "Int64", "n_occupations": "Int64",
                         "occupations_all_covered": "Int64", "occupations_none_covered": "Int64", "occupations_without_ratings": "Int64"})
