"""Where each benchmark lands (#38): its top occupations and families, its abstentions, and the
benchmark-intent yardstick's figures where the benchmark has them. One function makes the rows; the
report (sections.py) and the README (tools/readme.py) both render them, so the two never disagree.
"""

from __future__ import annotations

import numpy as np
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


def rows_by_benchmark(frame: pd.DataFrame, columns: list[str]) -> dict[str, list[tuple]]:
    """benchmark → its rows' `columns` as tuples, in the frame's order (none for an empty frame)."""
    out: dict[str, list[tuple]] = {}
    if len(frame):
        # Columns as lists: iterating a pyarrow-backed text column itself costs ~1 µs a value.
        for benchmark, *values in zip(frame["benchmark"].tolist(), *(frame[c].tolist() for c in columns)):
            out.setdefault(benchmark, []).append(tuple(values))
    return out


def _kahan(values) -> float:
    """The sum pandas' Cython group_sum makes of a group (compensated, NaN skipped, in row order)."""
    total = compensation = 0.0
    for value in values:
        if value != value:
            continue
        y = value - compensation
        t = total + y
        compensation = t - total - y
        if compensation != compensation:
            compensation = 0.0
        total = t
    return total


def _family_sums(ordered: pd.DataFrame) -> pd.DataFrame:
    """benchmark, family_code, family_title, share_of_labeled: each family's share of each benchmark,
    to the last bit as `groupby(["family_code", "family_title"]).sum()` over that benchmark's rows
    alone gave it (one such groupby per benchmark took ~3 s of the report at 1,000 benchmarks).

    That last bit can order two families, and pandas adds a group's values one of two ways: where the
    benchmark's families come in sorted order down its occupation ranks (its group ids monotonic,
    285 of the 1,000 synthetic benchmarks), numpy's `add.reduceat` over each run; otherwise its
    compensated Cython sum, row by row. So do both, each where pandas would have; a benchmark with
    a missing family or share keeps pandas' own groupby."""
    keys = ["family_code", "family_title"]
    missing = ordered[[*keys, "share_of_labeled"]].isna().any(axis=1).groupby(ordered["benchmark"], sort=False).transform("any")
    odd = ordered[missing]
    rows = ordered[~missing]
    same_benchmark = rows["benchmark"].eq(rows["benchmark"].shift())
    code, title = rows["family_code"], rows["family_title"]
    before = (code < code.shift()) | ((code == code.shift()) & (title < title.shift()))
    unsorted = (same_benchmark & before).groupby(rows["benchmark"], sort=False).transform("any")
    parts = []
    sorted_rows = rows[~unsorted]
    if len(sorted_rows):
        starts = np.flatnonzero(~(sorted_rows[["benchmark", *keys]].eq(sorted_rows[["benchmark", *keys]].shift())).all(axis=1).to_numpy())
        sums = sorted_rows.iloc[starts][["benchmark", *keys]].reset_index(drop=True)
        parts.append(sums.assign(share_of_labeled=np.add.reduceat(sorted_rows["share_of_labeled"].to_numpy(), starts)))
    interleaved = rows[unsorted]
    if len(interleaved):
        groups = interleaved.groupby(["benchmark", *keys], sort=False)["share_of_labeled"]
        parts.append(groups.agg(lambda s: _kahan(s.tolist())).reset_index())
    for benchmark, mine in odd.groupby("benchmark", sort=False):
        parts.append(mine.groupby(keys, as_index=False)["share_of_labeled"].sum().assign(benchmark=benchmark))
    columns = ["benchmark", *keys, "share_of_labeled"]
    return pd.concat([p[columns] for p in parts], ignore_index=True) if parts else pd.DataFrame(columns=columns)


def _first_per_benchmark(benchmarks, titles, shares, most: int) -> dict[str, list[tuple[str, float]]]:
    """benchmark → the first `most` (title, share) of its rows, in the order given."""
    out: dict[str, list[tuple[str, float]]] = {}
    for benchmark, title, share in zip(benchmarks, titles, shares):
        mine = out.setdefault(benchmark, [])
        if len(mine) < most:
            mine.append((title, float(share)))
    return out


def _top_families(ordered: pd.DataFrame, most: int) -> dict[str, list[tuple[str, float]]]:
    """benchmark → its `most` families (title, summed share of labeled prompts), largest first, ties
    by family code; `ordered`: the landing by benchmark, then occupation rank."""
    sums = _family_sums(ordered)
    # Ties as pandas left them: its groupby sorted the families by code, then title.
    ranked = sums.sort_values(["benchmark", "share_of_labeled", "family_code", "family_title"], ascending=[True, False, True, True], kind="stable")
    return _first_per_benchmark(ranked["benchmark"], ranked["family_title"].str.removesuffix(" Occupations"), ranked["share_of_labeled"], most)


def landing_rows(landing: pd.DataFrame, index: pd.DataFrame, validation: pd.DataFrame, labeler: str, top: int = 3) -> pd.DataFrame:
    """One row per benchmark of the index: prompts, labeled prompts, the abstained share (of the prompts
    the judge read), its `top` occupations and 2 families as (title, share of labeled prompts) lists,
    and the intent figures (NaN where the benchmark has none)."""
    intent = intent_figures(validation, labeler)
    halves = intent_halves(validation, labeler)
    occupations, families = {}, {}
    if len(landing):
        ordered = landing.sort_values(["benchmark", "occupation_rank"], kind="stable")
        occupations = _first_per_benchmark(ordered["benchmark"], ordered["occupation_title"], ordered["share_of_labeled"], top)
        families = _top_families(ordered, 2)
    rows = []
    for b in index.itertuples(index=False):
        read = int(b.n_prompts) - int(b.n_prompts_unlabeled)
        figures = intent.get(b.benchmark, {})
        rows.append(
            {
                "benchmark": b.benchmark,
                "n_prompts": int(b.n_prompts),
                "n_prompts_labeled": int(b.n_prompts_labeled),
                "abstained_share": int(b.n_prompts_abstained) / read if read else float("nan"),
                "top_occupations": occupations.get(b.benchmark, []),
                "top_families": families.get(b.benchmark, []),
                "intent_half": halves.get(b.benchmark),
                **{metric: figures.get(metric, float("nan")) for metric in INTENT_METRICS},
            }
        )
    return pd.DataFrame(rows)


def shares_text(pairs: list[tuple[str, float]], *, shorten: int = 0) -> str:
    """'Computer Programmers 62% · Web Developers 9%' (titles cut to `shorten` characters if given)."""
    cut = lambda t: t if not shorten or len(t) <= shorten else t[: shorten - 1].rstrip() + "…"  # noqa: E731
    return " · ".join(f"{cut(title)} {share:.0%}" for title, share in pairs)
