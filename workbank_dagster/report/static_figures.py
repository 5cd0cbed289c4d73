"""SVG copies of the report's figures (matplotlib), for papers and slides that cannot embed HTML.

Same frames as figures.py, same encodings. The SVGs are deterministic (no date, fixed ids), so a
re-run with unchanged data rewrites identical files.

Why a second drawing, in matplotlib, and not Plotly's own SVG export: Plotly writes static images
only through kaleido, and kaleido 1.x drives a Chrome it downloads or finds at run time. `make run`
must work offline on a machine whose only browser is the test suite's Debian Chromium, and must
give byte-identical files on a re-run; matplotlib's SVG backend needs neither a browser nor a
network and is deterministic with a fixed hash salt.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import PatchCollection  # noqa: E402
from matplotlib.colors import LinearSegmentedColormap  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from .figures import (  # noqa: E402
    COVERAGE_SCALE,
    COVERED,
    EXPOSED,
    FIGURE_DATA,
    MOST_BENCHMARKS_IN_LEGEND,
    NOT_EXPOSED,
    UNCOVERED,
    available_figures,
    largest_contributions,
    refresh_note,
)

plt.rcParams.update({"svg.hashsalt": "workbank", "svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
COVERAGE_CMAP = LinearSegmentedColormap.from_list("coverage", [(stop, colour) for stop, colour in COVERAGE_SCALE])
# A scatter of more points than this draws them as one embedded image (at RASTER_DPI) inside the SVG; its axes, text
# and legend stay vector. At a million prompts the model scores' 59,107 points made an SVG of 8.7 MB, one element a
# point, that took 1.0 s to write (0.4 s as an image at 150 dpi, 0.4 MB). The real run's 737 points stay vector.
MOST_VECTOR_POINTS = 5_000
RASTER_DPI = 150


def squarify(values: list[float], x: float, y: float, width: float, height: float) -> list[tuple[float, float, float, float]]:
    """Squarified treemap (Bruls, Huizing & van Wijk 2000): one (x, y, w, h) per value, in order.

    Values must be positive; their rectangles tile the box exactly.
    """
    if not values:
        return []
    total = float(sum(values))
    scaled = [v * width * height / total for v in values]
    rects: list[tuple[float, float, float, float]] = []

    def worst(row: list[float], side: float) -> float:
        s = sum(row)
        return max(max(side * side * r / (s * s), (s * s) / (side * side * r)) for r in row)

    def layout(row: list[float], x: float, y: float, width: float, height: float):
        s = sum(row)
        if width >= height:  # lay the row out as a column on the left
            column = s / height
            offset = y
            for r in row:
                h = r / column
                rects.append((x, offset, column, h))
                offset += h
            return x + column, y, width - column, height
        row_height = s / width
        offset = x
        for r in row:
            w = r / row_height
            rects.append((offset, y, w, row_height))
            offset += w
        return x, y + row_height, width, height - row_height

    remaining = scaled
    row: list[float] = []
    while remaining:
        side = min(width, height)
        candidate = remaining[0]
        if not row or worst(row + [candidate], side) <= worst(row, side):
            row.append(candidate)
            remaining = remaining[1:]
        else:
            x, y, width, height = layout(row, x, y, width, height)
            row = []
    if row:
        layout(row, x, y, width, height)
    return rects


def _save(fig, path: Path, dpi: int | None = None) -> Path:
    """`fig` as the SVG `path`; `dpi` (else matplotlib's default) sizes its images, not its vector elements."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight", **({"dpi": dpi} if dpi else {}))
    plt.close(fig)
    return path


def _finish(ax, title: str, xlabel: str, ylabel: str, *, percent_y: bool = False, **legend) -> None:
    """Axis labels, a percent y axis if asked, a frameless legend (its options), the title at the left."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if percent_y:
        ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.legend(frameon=False, **legend)
    ax.set_title(title, loc="left")


def benchmark_map_svg(occupations: pd.DataFrame, families: pd.DataFrame, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(12, 7.5))
    fams = families[families["n_tasks"] > 0].sort_values("n_tasks", ascending=False)
    tiles, shares, outlines = [], [], []
    for (fx, fy, fw, fh), fam in zip(squarify(fams["n_tasks"].astype(float).tolist(), 0, 0, 120, 75), fams.itertuples()):
        occs = occupations[(occupations["family_code"] == fam.family_code) & (occupations["n_tasks"] > 0)].sort_values("n_tasks", ascending=False)
        for (ox, oy, ow, oh), share in zip(squarify(occs["n_tasks"].astype(float).tolist(), fx, fy, fw, fh), occs["share_tasks_covered"]):
            tiles.append(Rectangle((ox, oy), ow, oh))
            shares.append(float(share))
        outlines.append(Rectangle((fx, fy), fw, fh))
        if fw * fh > 40:
            title = fam.family_title.replace(" Occupations", "")
            ax.text(fx + 0.5, fy + 0.5, title if len(title) < 34 else title[:32] + "…", fontsize=7, va="top", ha="left",
                    color="#1f2933", bbox=dict(facecolor="white", alpha=0.7, linewidth=0, pad=1))
    # One collection per layer: adding 923 patches one by one is most of the drawing time.
    ax.add_collection(PatchCollection(tiles, facecolors=[COVERAGE_CMAP(v) for v in shares], edgecolors="white", linewidths=0.3))
    ax.add_collection(PatchCollection(outlines, facecolors="none", edgecolors="#1f2933", linewidths=1.2))
    ax.set_xlim(0, 120)
    ax.set_ylim(0, 75)
    ax.invert_yaxis()
    ax.axis("off")
    sm = plt.cm.ScalarMappable(cmap=COVERAGE_CMAP, norm=plt.Normalize(0, 1))
    fig.colorbar(sm, ax=ax, fraction=0.025, pad=0.01, format=lambda v, _: f"{v:.0%}").set_label("share of tasks covered")
    ax.set_title(f"Benchmark map: {len(occupations)} occupations in {len(families)} families (area = tasks)", loc="left")
    return _save(fig, path)


def coverage_curves_svg(curve: pd.DataFrame, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for exposed, colour, name in ((True, EXPOSED, "exposed tasks"), (False, NOT_EXPOSED, "not exposed")):
        part = curve[curve["exposed"] == exposed].sort_values("log_wage_bill")
        x = np.exp(part["log_wage_bill"])
        ax.fill_between(x, part["ci_low"].clip(lower=0), part["ci_high"].clip(upper=1), color=colour, alpha=0.18, linewidth=0)
        ax.plot(x, part["p"], color=colour, linewidth=2, label=name)
    ax.set_xscale("log")
    _finish(ax, "Coverage by wage bill, exposed vs not (95% bands)", "occupation wage bill (US$, log scale)", "P(task covered)", percent_y=True)
    return _save(fig, path)


def importance_svg(importance: pd.DataFrame, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for exposed, colour, name, shift in ((False, NOT_EXPOSED, "not exposed", -0.08), (True, EXPOSED, "exposed", 0.08)):
        part = importance[importance["exposed"] == exposed].sort_values("quintile")
        ax.errorbar(part["quintile"] + shift, part["p"], yerr=[part["p"] - part["ci_low"], part["ci_high"] - part["p"]],
                    fmt="o:", color=colour, capsize=3, label=name)
    ax.set_xticks([1, 2, 3, 4, 5])
    _finish(ax, "Coverage by task importance (occupation fixed effects)", "importance quintile (1 = least important)", "adjusted P(covered)", percent_y=True)
    return _save(fig, path)


def model_scores_svg(scores: pd.DataFrame, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6, 5.5))
    rasterized = len(scores) > MOST_VECTOR_POINTS
    # One series (and legend entry) per benchmark, up to MOST_BENCHMARKS_IN_LEGEND: past that, the
    # benchmarks with the most scores keep theirs and the others share one grey series.
    named = scores["benchmark"].value_counts().sort_index(kind="stable").sort_values(ascending=False, kind="stable").index[:MOST_BENCHMARKS_IN_LEGEND]
    for benchmark, part in scores[scores["benchmark"].isin(named)].groupby("benchmark", sort=True):
        ax.scatter(part["simple_score"], part["weighted_score"], s=10, alpha=0.6, label=benchmark, rasterized=rasterized)
    others = scores[~scores["benchmark"].isin(named)]
    if len(others):
        ax.scatter(others["simple_score"], others["weighted_score"], s=6, alpha=0.3, color="#9aa5b1",
                   label=f"{others['benchmark'].nunique():,} other benchmarks", rasterized=rasterized)
    ax.plot([0, 1], [0, 1], color="#9aa5b1", linestyle="--", linewidth=1)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    _finish(ax, "Weighted vs simple occupation scores", "simple score (mean over prompts)", "O*NET-weighted score (mean over tasks)",
            fontsize=7, bbox_to_anchor=(1.02, 1), loc="upper left")
    return _save(fig, path, dpi=RASTER_DPI if rasterized else None)


def workbank_landscape_svg(zones: pd.DataFrame, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6.5, 6))
    rated = zones.dropna(subset=["mean_desire", "mean_capability"])
    rng = np.random.default_rng(0)
    for covered, colour, name in ((False, UNCOVERED, "not covered"), (True, COVERED, "covered")):
        part = rated[rated["covered"] == covered]
        jitter = rng.uniform(-0.04, 0.04, size=(len(part), 2))
        ax.scatter(part["mean_capability"] + jitter[:, 0], part["mean_desire"] + jitter[:, 1], s=8, alpha=0.6, color=colour, label=f"{name} ({len(part)})")
    ax.axvline(3, color="#52606d", linestyle="--", linewidth=1)
    ax.axhline(3, color="#52606d", linestyle="--", linewidth=1)
    for x, y, zone in ((4.55, 4.9, "Green Light"), (4.55, 1.1, "Red Light"), (1.45, 4.9, "R&D Opportunity"), (1.45, 1.1, "Low Priority")):
        ax.text(x, y, zone, ha="center", va="center", color="#52606d", fontweight="bold")
    ax.set_xlim(0.9, 5.1)
    ax.set_ylim(0.9, 5.1)
    _finish(ax, "WORKBank landscape, by benchmark coverage", "expert-rated automation capability", "worker automation desire", loc="center left")
    return _save(fig, path)


def family_work_time_svg(families: pd.DataFrame, path: Path) -> Path:
    frame = families.assign(share=families["hours_uncovered"] / families["hours"]).sort_values("share")
    fig, ax = plt.subplots(figsize=(8, 6.5))
    ax.barh([t.replace(" Occupations", "") for t in frame["family_title"]], frame["share"], color=UNCOVERED)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    ax.set_xlabel("share of the family's work hours on uncovered tasks")
    ax.set_title("Uncovered work time by family", loc="left")
    return _save(fig, path)


def coverage_history_svg(history: pd.DataFrame, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.plot(history["refresh"], history["work_time_share_uncovered"], marker="o", color=UNCOVERED)
    for row in history.to_dict("records"):
        note = refresh_note(row)
        if note:
            ax.annotate(note, (row["refresh"], row["work_time_share_uncovered"]), textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8)
    ax.set_xticks(list(history["refresh"]))
    ax.yaxis.set_major_formatter(lambda v, _: f"{v:.1%}")
    ax.set_xlabel("refresh (materialization of the headline)")
    ax.set_ylabel("share of work hours on uncovered tasks")
    ax.set_title("Uncovered share of US work time, refresh by refresh", loc="left")
    return _save(fig, path)


def benchmark_contribution_svg(contribution: pd.DataFrame, path: Path) -> Path:
    frame, title = largest_contributions(contribution)
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.3 * len(frame) + 1)))
    ax.barh(list(frame["benchmark"]), frame["n_tasks_covered_only_with_it"], color=COVERED)
    ax.set_xlabel("tasks covered with it and not without it")
    ax.set_title(title, loc="left")
    return _save(fig, path)


SVG_DRAWERS = {
    "benchmark_map": benchmark_map_svg,
    "coverage_curves": coverage_curves_svg,
    "importance_quintiles": importance_svg,
    "model_scores": model_scores_svg,
    "workbank_landscape": workbank_landscape_svg,
    "family_work_time": family_work_time_svg,
    "coverage_history": coverage_history_svg,
    "benchmark_contribution": benchmark_contribution_svg,
}


def write_static_figures(frames: dict[str, pd.DataFrame], folder: Path) -> dict[str, Path]:
    """Every figure whose data exists, as `<folder>/<name>.svg`."""
    return {
        name: SVG_DRAWERS[name](*(frames[n] for n in FIGURE_DATA[name]), folder / f"{name}.svg") for name in available_figures(frames)
    }
