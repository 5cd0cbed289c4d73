"""The report's interactive figures (Plotly), built from the frames of report/tables.py.

Pure functions: frame(s) in, `plotly.graph_objects.Figure` out. Every string that comes from data
(titles, benchmark and model names) is HTML-escaped before it reaches Plotly, whose labels accept
a little HTML: a benchmark or model called `<b>x</b>` or `<script>` shows as text.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

COVERED = "#2a7f62"
UNCOVERED = "#c8553d"
EXPOSED = "#3b5ba5"
NOT_EXPOSED = "#d08c2b"
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13, color="#1f2933")
COVERAGE_SCALE = [[0.0, "#f1efe9"], [0.05, "#f6d7a7"], [0.2, "#e9a03b"], [0.45, "#5aa18a"], [1.0, "#1d5c4a"]]

MAP_ROOT = "US occupations"


def esc(value) -> str:
    """Text for the page, a Plotly label or a hover: HTML-escaped (Plotly decodes the entities when
    it draws); a missing value is empty."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


# Each figure and the report frames it is drawn from (report/tables.py), for the page and the SVGs.
FIGURE_DATA = {
    "benchmark_map": ("occupations", "families"),
    "coverage_curves": ("coverage_curve",),
    "importance_quintiles": ("importance",),
    "model_scores": ("model_scores",),
    "workbank_landscape": ("zones",),
    "family_work_time": ("families",),
    "coverage_history": ("history",),
    "benchmark_contribution": ("contribution",),
}


def available_figures(frames: dict[str, pd.DataFrame]) -> list[str]:
    """The figures this run can draw: their frames have rows, and estimates where they have a `p`
    (a small run may leave a regression not estimable)."""

    def has_data(frame) -> bool:
        return frame is not None and len(frame) > 0 and ("p" not in frame or frame["p"].notna().any())

    return [name for name, needs in FIGURE_DATA.items() if all(has_data(frames.get(n)) for n in needs)]


def _layout(fig: go.Figure, title: str, height: int = 460) -> go.Figure:
    fig.update_layout(
        title=dict(text=esc(title), x=0.0, xanchor="left", font=dict(size=16)),
        font=FONT,
        height=height,
        margin=dict(l=60, r=20, t=60, b=50),
        paper_bgcolor="white",
        plot_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        hoverlabel=dict(font=dict(family=FONT["family"], size=12)),
    )
    fig.update_xaxes(showgrid=True, gridcolor="#eceae4", zeroline=False, linecolor="#9aa5b1")
    fig.update_yaxes(showgrid=True, gridcolor="#eceae4", zeroline=False, linecolor="#9aa5b1")
    return fig


def _jobs(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "no OEWS employment"
    return f"{value:,.0f} jobs"


def map_nodes(occupations: pd.DataFrame, families: pd.DataFrame) -> pd.DataFrame:
    """The treemap's nodes: a root, the families, the occupations (one row each, parents by id).

    Tile area is the number of O*NET tasks (every occupation gets a tile, including those with no
    OEWS employment); colour is the share of the tile's tasks that are covered.
    """
    total_tasks = int(occupations["n_tasks"].sum())
    total_covered = int(occupations["n_tasks_covered"].sum())
    root = {
        "id": "all",
        "parent": "",
        "label": f"{MAP_ROOT} ({len(occupations)})",
        "level": "root",
        "value": total_tasks,
        "share": total_covered / total_tasks if total_tasks else 0.0,
        "hover": f"{len(occupations)} occupations in {len(families)} families<br>{total_covered:,} of {total_tasks:,} tasks covered",
    }
    rows = [root]
    for fam in families.itertuples():
        rows.append(
            {
                "id": f"family:{fam.family_code}",
                "parent": "all",
                "label": esc(fam.family_title),
                "level": "family",
                "value": int(fam.n_tasks),
                "share": float(fam.n_tasks_covered) / fam.n_tasks if fam.n_tasks else 0.0,
                "hover": (
                    f"<b>{esc(fam.family_title)}</b> ({esc(fam.family_code)})<br>"
                    f"{int(fam.n_occupations_with_coverage)} of {int(fam.n_occupations)} occupations have a covered task<br>"
                    f"{int(fam.n_tasks_covered):,} of {int(fam.n_tasks):,} tasks covered<br>click to expand"
                ),
            }
        )
    for occ in occupations.itertuples():
        plural = "benchmark" if occ.n_benchmarks == 1 else "benchmarks"
        reach = f"{int(occ.n_benchmarks)} {plural}: {esc(occ.top_benchmarks)}" if occ.n_benchmarks else "no benchmark reaches it"
        if occ.n_benchmarks > 5:
            reach += f", and {int(occ.n_benchmarks) - 5} more"
        rows.append(
            {
                "id": f"occupation:{occ.onet_soc_code}",
                "parent": f"family:{occ.family_code}",
                "label": esc(occ.title),
                "level": "occupation",
                "value": int(occ.n_tasks),
                "share": float(occ.share_tasks_covered),
                "hover": (
                    f"<b>{esc(occ.title)}</b> ({esc(occ.onet_soc_code)})<br>"
                    f"{int(occ.n_tasks_covered)} of {int(occ.n_tasks)} tasks covered<br>"
                    f"{_jobs(occ.employment)}<br>{reach}"
                ),
            }
        )
    return pd.DataFrame(rows)


def benchmark_map(occupations: pd.DataFrame, families: pd.DataFrame, threshold: int) -> go.Figure:
    nodes = map_nodes(occupations, families)
    fig = go.Figure(
        go.Treemap(
            ids=nodes["id"],
            parents=nodes["parent"],
            labels=nodes["label"],
            values=nodes["value"],
            branchvalues="total",
            maxdepth=2,
            customdata=nodes[["hover"]].to_numpy(),
            hovertemplate="%{customdata[0]}<extra></extra>",
            marker=dict(
                colors=nodes["share"],
                colorscale=COVERAGE_SCALE,
                cmin=0,
                cmax=1,
                line=dict(color="white", width=1),
                colorbar=dict(title=dict(text="share of tasks<br>covered"), tickformat=".0%", thickness=12),
            ),
            textinfo="label",
            pathbar=dict(visible=True),
            sort=True,
        )
    )
    _layout(fig, f"Benchmark map: tile area = O*NET tasks, colour = share covered (≥ {threshold} prompts)", height=620)
    fig.update_layout(margin=dict(l=10, r=10, t=60, b=10))
    return fig


def _money_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    names = {6: "$1M", 7: "$10M", 8: "$100M", 9: "$1B", 10: "$10B", 11: "$100B", 12: "$1T"}
    vals, text = [], []
    for power, name in names.items():
        x = power * math.log(10)
        if low <= x <= high:
            vals.append(x)
            text.append(name)
    return vals, text


def coverage_curves(curve: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for exposed, colour, name in ((True, EXPOSED, "exposed tasks"), (False, NOT_EXPOSED, "not exposed")):
        part = curve[curve["exposed"] == exposed].sort_values("log_wage_bill")
        x = part["log_wage_bill"].tolist()
        fig.add_trace(
            go.Scatter(
                x=x + x[::-1],
                y=part["ci_high"].clip(upper=1).tolist() + part["ci_low"].clip(lower=0).tolist()[::-1],
                fill="toself",
                fillcolor=colour,
                opacity=0.18,
                line=dict(width=0),
                hoverinfo="skip",
                showlegend=False,
                name=f"{name}, 95% band",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=part["p"],
                mode="lines",
                line=dict(color=colour, width=3),
                name=name,
                customdata=np.stack([np.exp(part["log_wage_bill"]) / 1e9, part["ci_low"], part["ci_high"]], axis=1),
                hovertemplate=f"{name}<br>wage bill $%{{customdata[0]:.2f}}B<br>P(covered) %{{y:.1%}} (95%: %{{customdata[1]:.1%}}–%{{customdata[2]:.1%}})<extra></extra>",
            )
        )
    _layout(fig, "P(task covered) by the occupation's wage bill, exposed vs not (pointwise 95% bands, logit scale)")
    vals, text = _money_ticks(float(curve["log_wage_bill"].min()), float(curve["log_wage_bill"].max()))
    fig.update_xaxes(title="occupation wage bill (log scale)", tickvals=vals, ticktext=text)
    fig.update_yaxes(title="probability a task is covered", tickformat=".0%", rangemode="tozero")
    return fig


def importance_figure(importance: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for exposed, colour, name, shift in ((False, NOT_EXPOSED, "not exposed", -0.08), (True, EXPOSED, "exposed", 0.08)):
        part = importance[importance["exposed"] == exposed].sort_values("quintile")
        fig.add_trace(
            go.Scatter(
                x=part["quintile"] + shift,
                y=part["p"],
                mode="markers+lines",
                marker=dict(size=10, color=colour),
                line=dict(color=colour, width=1.5, dash="dot"),
                error_y=dict(type="data", symmetric=False, array=part["ci_high"] - part["p"], arrayminus=part["p"] - part["ci_low"], color=colour),
                name=name,
                customdata=np.stack([part["quintile"], part["ci_low"], part["ci_high"]], axis=1),
                hovertemplate=f"{name}, importance quintile %{{customdata[0]}}<br>adjusted P(covered) %{{y:.1%}} (95%: %{{customdata[1]:.1%}}–%{{customdata[2]:.1%}})<extra></extra>",
            )
        )
    _layout(fig, "Adjusted P(covered) by task-importance quintile (occupation fixed effects, 95% intervals)")
    fig.update_xaxes(title="importance quintile (1 = least important)", tickvals=[1, 2, 3, 4, 5])
    fig.update_yaxes(title="adjusted probability a task is covered", tickformat=".0%")
    return fig


def _escaped(values: pd.Series) -> list[str]:
    """`esc` of each value, computed once per distinct value."""
    codes, uniques = pd.factorize(values)
    escaped = [*(esc(u) for u in uniques), esc(None)]  # a missing value's code, -1, picks the last
    return [escaped[c] for c in codes]


def model_scores_figure(scores: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    # Every hover text at once, each distinct title, model and benchmark escaped once (row by row: ~0.9 s at 58,700 scores).
    title, model, benchmark = (_escaped(scores[c]) for c in ("title", "model", "benchmark"))
    hover = [f"<b>{t}</b> · {int(n)} tasks · {int(p)} prompts<br>{m} on {b}"
             for t, n, p, m, b in zip(title, scores["n_tasks"], scores["n_prompts"], model, benchmark)]
    for benchmark, part in scores.assign(_hover=hover).groupby("benchmark", sort=True):
        labels = part["_hover"].tolist()
        fig.add_trace(
            go.Scatter(
                x=part["simple_score"],
                y=part["weighted_score"],
                mode="markers",
                marker=dict(size=7, opacity=0.7),
                name=esc(benchmark),
                customdata=np.array(labels, dtype=object).reshape(-1, 1),
                hovertemplate="%{customdata[0]}<br>simple %{x:.2f} · O*NET-weighted %{y:.2f}<extra></extra>",
            )
        )
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(color="#9aa5b1", dash="dash"), hoverinfo="skip", showlegend=False))
    _layout(fig, "O*NET-weighted vs simple occupation scores (one point per model × benchmark × occupation)", height=520)
    fig.update_layout(legend=dict(orientation="v", x=1.02, y=1, xanchor="left", yanchor="top"))
    fig.update_xaxes(title="simple score (mean over prompts)", range=[-0.02, 1.02])
    fig.update_yaxes(title="O*NET-weighted score (mean over tasks)", range=[-0.02, 1.02])
    return fig


def workbank_landscape(zones: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    rated = zones.dropna(subset=["mean_desire", "mean_capability"])
    # A small deterministic jitter so tasks with the same means do not hide each other.
    rng = np.random.default_rng(0)
    for covered, colour, name in ((False, UNCOVERED, "not covered"), (True, COVERED, "covered")):
        part = rated[rated["covered"] == covered]
        jitter = rng.uniform(-0.04, 0.04, size=(len(part), 2))
        text = [
            f"<b>{esc(r.task)}</b><br>{esc(r.occupation_title)}<br>{esc(r.zone)} · {int(r.n_prompts)} prompts"
            for r in part.itertuples()
        ]
        fig.add_trace(
            go.Scattergl(
                x=part["mean_capability"] + jitter[:, 0],
                y=part["mean_desire"] + jitter[:, 1],
                mode="markers",
                marker=dict(size=6, color=colour, opacity=0.65),
                name=f"{name} ({len(part)})",
                customdata=np.array(text, dtype=object).reshape(-1, 1),
                hovertemplate="%{customdata[0]}<extra></extra>",
            )
        )
    for axis in ("x", "y"):
        line = dict(type="line", line=dict(color="#52606d", width=1.5, dash="dash"))
        if axis == "x":
            fig.add_shape(**line, x0=3, x1=3, y0=1, y1=5)
        else:
            fig.add_shape(**line, x0=1, x1=5, y0=3, y1=3)
    for x, y, zone in ((4.6, 4.85, "Green Light"), (4.6, 1.15, "Red Light"), (1.4, 4.85, "R&D Opportunity"), (1.4, 1.15, "Low Priority")):
        fig.add_annotation(x=x, y=y, text=f"<b>{zone}</b>", showarrow=False, font=dict(color="#52606d"))
    _layout(fig, "WORKBank: what workers want automated vs what experts rate agents capable of", height=560)
    fig.update_xaxes(title="expert-rated automation capability (1–5)", range=[0.9, 5.1])
    fig.update_yaxes(title="worker automation desire (1–5)", range=[0.9, 5.1])
    return fig


def family_work_time(families: pd.DataFrame) -> go.Figure:
    frame = families.assign(share=families["hours_uncovered"] / families["hours"]).sort_values("share")
    fig = go.Figure(
        go.Bar(
            x=frame["share"],
            y=[esc(t) for t in frame["family_title"]],
            orientation="h",
            marker=dict(color=UNCOVERED),
            customdata=np.stack([frame["hours"] / 1e9, frame["n_occupations_with_coverage"], frame["n_occupations"]], axis=1),
            hovertemplate="%{y}<br>%{x:.1%} of %{customdata[0]:.1f}B work hours uncovered<br>%{customdata[1]} of %{customdata[2]} occupations have a covered task<extra></extra>",
        )
    )
    _layout(fig, "Share of each family's US work hours on uncovered tasks", height=620)
    fig.update_layout(margin=dict(l=330, r=20, t=60, b=50))
    fig.update_xaxes(title="share of work hours on uncovered tasks", tickformat=".0%", range=[0, 1])
    return fig


def refresh_note(row, most: int = 3) -> str:
    """What a refresh changed, in a few words: '+a, b · ~c · −d' (added, changed, removed); more than
    `most` benchmarks added at once say how many."""
    parts = []
    for column, sign in (("benchmarks_added", "+"), ("benchmarks_changed", "~"), ("benchmarks_removed", "−")):
        value = row.get(column)
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)) or not value:
            continue
        names = str(value).split(", ")
        parts.append(f"{sign}{len(names)} benchmarks" if len(names) > most else sign + ", ".join(names))
    return " · ".join(parts)


def coverage_history(history: pd.DataFrame) -> go.Figure:
    """The uncovered share of work time over refreshes, each point annotated with what it changed."""
    notes = [refresh_note(row) for row in history.to_dict("records")]
    when = pd.to_datetime(history["materialized_at"], utc=True).dt.strftime("%Y-%m-%d %H:%M UTC")
    fig = go.Figure(
        go.Scatter(
            x=history["refresh"],
            y=history["work_time_share_uncovered"],
            mode="lines+markers+text",
            text=[esc(n) for n in notes],
            textposition="top center",
            line=dict(color=UNCOVERED),
            customdata=np.stack([when, history["n_benchmarks"], history["n_tasks_covered"], [esc(n) or "nothing" for n in notes]], axis=1),
            hovertemplate="refresh %{x} · %{customdata[0]}<br>%{y:.2%} of work time uncovered<br>%{customdata[1]} benchmarks, "
            "%{customdata[2]} tasks covered<br>changed: %{customdata[3]}<extra></extra>",
        )
    )
    _layout(fig, "Uncovered share of US work time, refresh by refresh", height=420)
    fig.update_xaxes(title="refresh (materialization of the headline)", dtick=1, range=history_range(history["refresh"], 0.5))
    fig.update_yaxes(title="share of work hours on uncovered tasks", tickformat=".1%", range=share_range(history["work_time_share_uncovered"]))
    return fig


def history_range(refreshes: pd.Series, margin: float) -> list[float]:
    return [float(refreshes.min()) - margin, float(refreshes.max()) + margin] if len(refreshes) else [0.0, 1.0]


def share_range(shares: pd.Series) -> list[float]:
    """A y range around the shares, never past 0 or 100% (one point autoscaled to 0-190%)."""
    values = shares.dropna().astype(float)
    if values.empty:
        return [0.0, 1.0]
    pad = max(0.01, 0.25 * (values.max() - values.min()))
    return [max(0.0, values.min() - pad), min(1.0, values.max() + pad)]


# A chart of one bar or one legend entry per benchmark stops being read long before a thousand
# benchmarks (at a million prompts the bar chart was 300 inches tall): past these, the charts show the
# largest and say how many they leave out; the tables behind them keep every benchmark.
MOST_CONTRIBUTIONS_SHOWN = 40
MOST_BENCHMARKS_IN_LEGEND = 20


def largest_contributions(contribution: pd.DataFrame, most: int = MOST_CONTRIBUTIONS_SHOWN) -> tuple[pd.DataFrame, str]:
    """The benchmarks to draw, in drawing order (largest last, so on top of a horizontal bar chart),
    at most `most` of them (the most tasks covered only with them, ties by name), and the title."""
    frame = contribution.sort_values(["n_tasks_covered_only_with_it", "benchmark"], ascending=[True, False])
    title = "Tasks covered only with each benchmark"
    if len(frame) <= most:
        return frame, title
    return frame.tail(most), f"Tasks covered only with each benchmark: the {most} that cover most alone, of {len(frame):,}"


def benchmark_contribution(contribution: pd.DataFrame) -> go.Figure:
    """Per benchmark, the tasks covered only with it (what coverage would lose without it); the
    largest MOST_CONTRIBUTIONS_SHOWN when there are more."""
    frame, title = largest_contributions(contribution)
    fig = go.Figure(
        go.Bar(
            x=frame["n_tasks_covered_only_with_it"],
            y=[esc(b) for b in frame["benchmark"]],
            orientation="h",
            marker=dict(color=COVERED),
            customdata=np.stack([frame["n_occupations_covered_only_with_it"], frame["change_without_it"].astype(float)], axis=1),
            hovertemplate="%{y}: %{x} tasks and %{customdata[0]} occupations covered only with it<br>without it, "
            "+%{customdata[1]:.2%} of work time uncovered<extra></extra>",
        )
    )
    _layout(fig, title, height=max(320, 26 * len(frame) + 120))
    fig.update_layout(margin=dict(l=180, r=20, t=60, b=50))
    fig.update_xaxes(title="tasks covered with it and not without it")
    return fig
