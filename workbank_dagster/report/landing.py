"""Where each benchmark lands (#38): its top occupations and families, its abstentions, and the
benchmark-intent yardstick's figures where the benchmark has them. One function makes the rows; the
report (sections.py) and the README (tools/readme.py) both render them, so the two never disagree.
"""

from __future__ import annotations

import pandas as pd

INTENT_METRICS = ("top1_plausible", "any_plausible", "primary_covered")


def intent_figures(validation: pd.DataFrame, labeler: str) -> dict[str, dict[str, float]]:
    """benchmark → {metric: value} of the intent yardstick for one labeler (its per-benchmark rows)."""
    if validation.empty:
        return {}
    mine = validation[(validation["labeler"] == labeler) & (validation["yardstick"] == "intent") & (validation["benchmark"] != "all")]
    out: dict[str, dict[str, float]] = {}
    for benchmark, metric, value in zip(mine["benchmark"], mine["metric"], mine["value"]):
        out.setdefault(benchmark, {})[metric] = float(value)
    return out


def intent_halves(validation: pd.DataFrame, labeler: str) -> dict[str, str]:
    """benchmark → the half of the intent split it is in (its rows' subset)."""
    if validation.empty:
        return {}
    mine = validation[(validation["labeler"] == labeler) & (validation["yardstick"] == "intent") & (validation["benchmark"] != "all")]
    return dict(zip(mine["benchmark"], mine["subset"]))


def by_benchmark(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """benchmark → its rows of `frame`, in the frame's order (none for an empty frame)."""
    # One groupby instead of comparing every row once per benchmark: with a thousand benchmarks those
    # filters cost seconds.
    return dict(tuple(frame.groupby("benchmark", sort=False))) if len(frame) else {}


def landing_rows(landing: pd.DataFrame, index: pd.DataFrame, validation: pd.DataFrame, labeler: str, top: int = 3) -> pd.DataFrame:
    """One row per benchmark of the index: prompts, labeled prompts, the abstained share (of the prompts
    the judge read), its `top` occupations and 2 families as (title, share of labeled prompts) lists,
    and the intent figures (NaN where the benchmark has none)."""
    intent = intent_figures(validation, labeler)
    halves = intent_halves(validation, labeler)
    parts = by_benchmark(landing)
    rows = []
    for b in index.itertuples(index=False):
        # Each benchmark's own groupby, as before: the family sums' last bit (which can order two families)
        # depends on the rows pandas sums together, so one groupby over every benchmark could differ.
        mine = parts.get(b.benchmark, landing.iloc[0:0]).sort_values("occupation_rank") if len(landing) else landing
        occupations = [(t, float(s)) for t, s in zip(mine["occupation_title"][:top], mine["share_of_labeled"][:top])] if len(mine) else []
        families = (
            mine.groupby(["family_code", "family_title"], as_index=False)["share_of_labeled"].sum().sort_values(["share_of_labeled", "family_code"], ascending=[False, True])
            if len(mine)
            else pd.DataFrame(columns=["family_title", "share_of_labeled"])
        )
        read = int(b.n_prompts) - int(b.n_prompts_unlabeled)
        figures = intent.get(b.benchmark, {})
        rows.append(
            {
                "benchmark": b.benchmark,
                "n_prompts": int(b.n_prompts),
                "n_prompts_labeled": int(b.n_prompts_labeled),
                "abstained_share": int(b.n_prompts_abstained) / read if read else float("nan"),
                "top_occupations": occupations,
                "top_families": [(t.removesuffix(" Occupations"), float(s)) for t, s in zip(families["family_title"][:2], families["share_of_labeled"][:2])],
                "intent_half": halves.get(b.benchmark),
                **{metric: figures.get(metric, float("nan")) for metric in INTENT_METRICS},
            }
        )
    return pd.DataFrame(rows)


def shares_text(pairs: list[tuple[str, float]], *, shorten: int = 0) -> str:
    """'Computer Programmers 62% · Web Developers 9%' (titles cut to `shorten` characters if given)."""
    cut = lambda t: t if not shorten or len(t) <= shorten else t[: shorten - 1].rstrip() + "…"  # noqa: E731
    return " · ".join(f"{cut(title)} {share:.0%}" for title, share in pairs)
