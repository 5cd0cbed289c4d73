"""The self-contained HTML report: headline, figures, tables, methodology, attribution.

`render_report` is pure: frames, headline numbers, settings and data versions in, one HTML string
out. plotly.js is inlined once, so the file works opened from disk with no network. Every value
that comes from data goes through `figures.esc` (tables and figures): a prompt that
contains `<script>` is shown as text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pandas as pd
import plotly.graph_objects as go
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from ..settings import WORDS_PER_CHUNK
from . import article, figures, intervals
from .attribution import ONET_CREDIT, WORKS
from .bars import FAMILY_BAR
from .figures import available_figures, esc
from .formats import isnan as _isnan
from .formats import num, pct
from .landing import by_benchmark, landing_rows, shares_text
from .limits import band_position, limitations

CSS = """
:root { --ink:#1f2933; --muted:#52606d; --line:#e4e1d9; --paper:#fbfaf7; --accent:#2a7f62; --warn:#c8553d; }
* { box-sizing: border-box; }
body { margin:0; font-family: Inter, "Segoe UI", Helvetica, Arial, sans-serif; color:var(--ink); background:var(--paper); line-height:1.5; }
header { background:#1f2933; color:#f5f3ee; padding:2.2rem 0 1.6rem; }
header h1 { margin:0 0 .3rem; font-size:1.9rem; font-weight:700; letter-spacing:-.01em; }
@media (max-width: 800px) { .cards { grid-template-columns:1fr; } }
header p { margin:.2rem 0; color:#cbd2d9; max-width:60rem; }
.wrap { max-width:1180px; margin:0 auto; padding:0 1.5rem; }
nav { position:sticky; top:0; z-index:5; background:#fffdf8; border-bottom:1px solid var(--line); }
nav .wrap { display:flex; flex-wrap:wrap; gap:.2rem 1.1rem; padding-top:.55rem; padding-bottom:.55rem; font-size:.9rem; }
nav a { color:var(--muted); text-decoration:none; } nav a:hover { color:var(--accent); }
section { background:white; border:1px solid var(--line); border-radius:10px; margin:1.4rem 0; padding:1.3rem 1.5rem; }
h2 { margin:.1rem 0 .6rem; font-size:1.3rem; } h3 { margin:1rem 0 .4rem; font-size:1.05rem; }
p.lede { color:var(--muted); margin-top:0; max-width:62rem; }
.cards { display:grid; grid-template-columns:repeat(3, 1fr); gap:.8rem; margin:1.2rem 0 0; }
.card { background:#2b3742; border-radius:8px; padding:.8rem 1rem; }
.card .value { font-size:1.65rem; font-weight:700; color:white; }
.card .label { font-size:.84rem; color:#cbd2d9; }
.card .ci { font-size:.78rem; color:#9aa5b1; }
.labeler { margin-top:1rem; font-size:.9rem; color:#cbd2d9; }
.labeler b { color:white; }
.warn { color:#f0b48a; }
table { border-collapse:collapse; width:100%; font-size:.86rem; margin:.4rem 0 .8rem; }
th, td { text-align:left; padding:.32rem .55rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f4f2ec; font-weight:600; position:sticky; top:2.4rem; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
td.prompt { max-width:26rem; color:var(--muted); font-size:.8rem; }
.scroll { max-height:32rem; overflow:auto; border:1px solid var(--line); border-radius:6px; }
.scroll th { top:0; }  /* inside its own scroll box a header sticks to the box's top, not below the page's nav (it hid the first row) */
.note { font-size:.85rem; color:var(--muted); }
code { background:#f4f2ec; padding:.05rem .3rem; border-radius:4px; font-size:.85em; }
.side-by-side { display:grid; grid-template-columns:minmax(0,1fr) minmax(0,1fr); gap:1rem; align-items:start; }
@media (max-width: 900px) { .side-by-side { grid-template-columns:1fr; } }
dl.settings { display:grid; grid-template-columns:max-content 1fr; gap:.2rem 1rem; font-size:.88rem; }
dl.settings dt { font-weight:600; } dl.settings dd { margin:0; }
footer { color:var(--muted); font-size:.8rem; padding:1rem 0 3rem; }
ol.limits { margin:.2rem 0 .4rem; padding-left:1.4rem; max-width:64rem; } ol.limits li { margin:.45rem 0; }
.labeler a { text-decoration:underline; }
"""

SECTIONS = (
    ("map", "Benchmark map"),
    ("landing", "Where benchmarks land"),
    ("limitations", "Limitations"),
    ("work-time", "Work time"),
    ("exposure", "Exposure & wages"),
    ("importance", "Importance"),
    ("like-for-like", "Like for like"),
    ("sensitivity", "Sensitivity"),
    ("history", "History"),
    ("scores", "Model scores"),
    ("workbank", "WORKBank"),
    ("benchmarks", "Benchmark index"),
    ("methodology", "Methodology"),
    ("attribution", "Attribution & licences"),
    ("downloads", "Downloads"),
)


NOT_ESTIMABLE = "<p class='note'>Not estimable in this run (too few covered tasks).</p>"


def band_note(band: pd.DataFrame, calibration: pd.DataFrame) -> str:
    """The label-uncertainty band beside the resampling spread, with its calibration."""
    if band is None or band.empty or pd.isna(band.iloc[0]["band_low"]):
        return ""
    b = band.iloc[0]
    tune = calibration[calibration["fitted_on"]] if calibration is not None and len(calibration) else pd.DataFrame()
    fitted = (
        f"the judge's probability p of its best occupation calibrated on {int(tune.iloc[0]['n_prompts'])} labeled GDPval prompts of labels_dev's "
        f"tune half, q = Λ({tune.iloc[0]['intercept']:.2f} + {tune.iloc[0]['slope']:.2f} · logit(p)), {pct(b.mean_calibrated_confidence)} on average"
        if len(tune) else "the judge's probability of its best occupation, uncalibrated (no calibration could be fitted)"
    )
    return (f"<p class='note'>Label uncertainty: {int(b.draws)} draws, every labeled prompt's labels re-drawn from its candidates ({esc(fitted)}).<br>"
            f"Uncovered work time: {esc(intervals.LABEL_BAND.describe(pct(b.band_low), pct(b.band_high)))}; tasks covered {num(b.n_tasks_covered_low)}–{num(b.n_tasks_covered_high)}, "
            f"occupations with a covered task {num(b.n_occupations_low)}–{num(b.n_occupations_high)}. {esc(band_position(b))}</p>")


Column = tuple[str, str, Callable | None]  # (column, heading, formatter returning plain text)


def html_table(frame: pd.DataFrame, columns: list[Column], *, scroll: bool = False, table_id: str | None = None) -> str:
    """An escaped HTML table: numbers right-aligned, every cell passed through `esc`."""
    if frame.empty:
        return '<p class="note">Not computed in this run.</p>'
    head = "".join(
        f'<th class="num">{esc(title)}</th>' if fmt is not None else f"<th>{esc(title)}</th>" for _, title, fmt in columns
    )
    rows = []
    for record in frame.to_dict("records"):
        cells = []
        for column, _, fmt in columns:
            value = record.get(column)
            if fmt is not None:
                cells.append(f'<td class="num">{esc(fmt(value))}</td>')
            else:
                css = ' class="prompt"' if column == "example_prompt" else ""
                cells.append(f"<td{css}>{esc(value)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    table = f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f'<div class="scroll">{table}</div>' if scroll else table


def figure_div(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config={"displaylogo": False, "responsive": True})


def _card(value: str, label: str, ci: str = "") -> str:
    ci_html = f'<div class="ci">{esc(ci)}</div>' if ci else ""
    return f'<div class="card"><div class="value">{esc(value)}</div><div class="label">{esc(label)}</div>{ci_html}</div>'


def headline_cards(h: Mapping) -> str:
    def ci(prefix, fmt):  # the interval named for what it is (report/intervals.py)
        return intervals.describe(h, prefix, fmt)

    ratio = lambda v: "—" if _isnan(v) else f"{v:.2f}×"  # noqa: E731
    uncovered = "; ".join(x for x in (ci("work_time_share_uncovered", pct), ci(intervals.LABEL_BAND_PREFIX, pct)) if x)
    simple = h.get("exposure_coverage_ratio_simple")
    kept = h.get("importance_logit_occupations_kept")
    cards = [
        _card(pct(h.get("work_time_share_uncovered")), f"of US work time is on tasks with fewer than {h.get('coverage_threshold')} prompts (uncovered)", uncovered),
        _card(f"{h.get('n_occupations_with_covered_task', 0):,} / {h.get('n_occupations', 0):,}", "occupations with at least one covered task"),
        _card(f"{h.get('n_families_without_covered_occupation', 0)} / {h.get('n_families', 0)}", "families with no covered occupation"),
        _card(f"{h.get('n_tasks_covered', 0):,} / {h.get('n_tasks', 0):,}", f"tasks covered (≥ {h.get('coverage_threshold')} prompts)"),
        _card(ratio(h.get("exposure_coverage_ratio")), "as likely to be covered if AI-exposed, adjusted (median wage bill)"
              + ("" if simple is None else f"; simple ratio {ratio(simple)}"), ci("exposure_coverage_ratio", ratio)),
        _card(ratio(h.get("importance_top_bottom_ratio")), "most vs least important quintile, adjusted"
              + ("" if kept is None else f" (on {kept:,} of {h.get('n_occupations', 0):,} occupations)"), ci("importance_top_bottom_ratio", ratio)),
    ]
    return '<div class="cards">' + "".join(cards) + "</div>"


def rejected_files_notice(rejected: pd.DataFrame | None) -> str:
    """Which benchmark files this run rejected and why; their previous rows, if any, are what is counted."""
    if rejected is None or rejected.empty:
        return ""
    items = "".join(
        f"<li><b>{esc(r.benchmark)}</b> ({esc(num(r.n_prompts))} prompts from its last good file counted): {esc(r.error)}</li>"
        for r in rejected.itertuples(index=False)
    )
    return f'<div class="warn rejected"><b>{len(rejected)} benchmark file(s) rejected in this run</b>; every other benchmark was refreshed.<ul>{items}</ul></div>'


def labeler_line(h: Mapping) -> str:
    """Who labeled, how much, and how well on the half of labels_dev no judge was tuned on (held-out
    figures only), against the one family bar (bars.FAMILY_BAR)."""
    parts = [f"Labels by <b>{esc(h.get('labeler'))}</b>: {esc(num(h.get('n_labels')))} labels on "
             f"{esc(num(h.get('n_prompts_labeled')))} of {esc(num(h.get('n_prompts')))} prompts from {esc(h.get('n_benchmarks'))} benchmarks "
             f"({esc(num(h.get('labels_per_labeled_prompt'), 2))} per labeled prompt); {esc(num(h.get('n_prompts_abstained')))} abstained (the judge was not "
             f"confident: each is recorded with its reason and counted), {esc(num(h.get('n_prompts_unlabeled_language')))} not in English, "
             "left unlabeled."]
    held = h.get(FAMILY_BAR.headline_key)
    if held is not None:
        interval = intervals.describe(h, FAMILY_BAR.headline_key, pct)
        parts.append(f" On the half of the benchmark authors' labels (labels_dev) it was not tuned on: family of the top label right for "
                     f"<b>{pct(held)}</b>{f' ({esc(interval)})' if interval else ''} of GDPval prompts, the top label in the authors' occupation "
                     f"for <b>{pct(h.get('holdout_gdpval_occupation_top1'))}</b>; TheAgentCompany family {pct(h.get('holdout_theagentcompany_family_top1'))}.")
        if not FAMILY_BAR.met(held):
            parts.append(f' <span class="warn">Below the {pct(FAMILY_BAR.value, 0)} family bar: read coverage counts as approximate '
                         '(<a class="warn" href="#limitations">Limitations</a>).</span>')
    else:
        parts.append(' <span class="warn">This labeler has not been validated.</span>')
    return '<div class="labeler">' + "".join(parts) + "</div>"


VALIDATION_ROWS = [
    ("labels_dev", "holdout", "gdpval", "family", "top1", "GDPval family top-1"),
    ("labels_dev", "holdout", "gdpval", "occupation", "top1", "GDPval occupation top-1"),
    ("labels_dev", "holdout", "gdpval", "occupation", "precision", "GDPval occupation precision"),
    ("labels_dev", "holdout", "gdpval", "all", "labels_per_labeled_prompt", "labels per labeled GDPval prompt"),
    ("labels_dev", "holdout", "theagentcompany", "family", "top1", "TheAgentCompany family top-1"),
    ("labels_dev", "holdout", "all", "all", "abstained_share", "abstained"),
    ("reference", "all", "all", "task", "precision", "reference set: task precision (exact ID)"),
    ("reference", "all", "all", "task", "recall", "reference set: task recall"),
    ("reference", "all", "all", "occupation", "precision", "reference set: occupation precision"),
    ("reference", "all", "all", "occupation", "recall", "reference set: occupation recall"),
]


def judges_body(f: Mapping) -> str:
    """Per labeler, the validation figures (with their intervals) and the regression ratios under its labels."""
    v = f.get("validation", pd.DataFrame())
    if v is None or v.empty:
        return '<p class="note">No judge was validated in this run.</p>'
    labelers = sorted(v["labeler"].unique())
    rows = []
    for yardstick, subset, benchmark, level, metric, label in VALIDATION_ROWS:
        mine = v[(v["yardstick"] == yardstick) & (v["subset"] == subset) & (v["benchmark"] == benchmark) & (v["level"] == level) & (v["metric"] == metric)]
        record = {"figure": label}
        for labeler in labelers:
            hit = mine[mine["labeler"] == labeler]
            if hit.empty:
                record[labeler] = "—"
                continue
            value, low, high = hit.iloc[0][["value", "ci_low", "ci_high"]]
            record[labeler] = num(value, 2) + ("" if _isnan(low) else f" ({num(low, 2)}–{num(high, 2)})")
        rows.append(record)
    table = html_table(pd.DataFrame(rows), [("figure", "", None), *((name, name, None) for name in labelers)], scroll=True)
    table += (f"<p class='note'>In brackets: for a share, its {esc(intervals.WILSON.describe('low', 'high'))}; for labels per prompt, "
              f"its {esc(intervals.NORMAL_MEAN.describe('low', 'high'))}.</p>")
    ratios = f.get("judge_ratios", pd.DataFrame())
    if ratios is not None and not ratios.empty:
        ratio = lambda v, lo, hi: f"{num(v, 2)}× ({num(lo, 2)}–{num(hi, 2)})"  # noqa: E731
        frame = pd.DataFrame(
            {
                "labeler": ratios["labeler"],
                "exposure": [ratio(*r) for r in ratios[["exposure_coverage_ratio", "exposure_ci_low", "exposure_ci_high"]].itertuples(index=False)],
                "importance": [ratio(*r) for r in ratios[["importance_top_bottom_ratio", "importance_ci_low", "importance_ci_high"]].itertuples(index=False)],
            }
        )
        table += "<h3>The regression ratios under each judge's labels</h3>" + html_table(
            frame, [("labeler", "judge", None), ("exposure", "exposed / not exposed", None), ("importance", "top / bottom importance quintile", None)]
        ) + f"<p class='note'>In brackets: {esc(intervals.CLUSTERED_WALD.describe('low', 'high'))}.</p>"
    return table


def limitations_body(h: Mapping, f: Mapping) -> str:
    """Every limitation the run's outputs state (limits.py), each with a link to the section that says more."""
    items = "".join(
        f'<li id="limit-{esc(item.key)}"><b>{esc(item.title)}.</b> {esc(item.text)} <a href="#{esc(item.section)}">More</a></li>' for item in limitations(h, f)
    )
    return f'<ol class="limits">{items}</ol>' if items else "<p class='note'>Not computed in this run.</p>"


def like_for_like_body(h: Mapping, f: Mapping) -> str:
    """The article's published figures beside ours (article.py), then both ratios at every threshold."""
    rows = pd.DataFrame(article.like_for_like(h, f), columns=["what", "ours", "article"])
    body = html_table(rows, [("what", "", None), ("ours", f"ours ({h.get('n_benchmarks')} benchmarks, {h.get('labeler')})", None),
                             ("article", f"article ({article.ARTICLE['benchmarks']} benchmarks, its chat-model judge)", None)], table_id="like-for-like-table")
    header, threshold_rows = article.ratios_by_threshold(h, f)
    if threshold_rows:
        frame = pd.DataFrame(threshold_rows, columns=header)
        body += ("<h3>Both ratios at every threshold</h3>"
                 + html_table(frame, [(c, c, None) for c in header], table_id="ratios-by-threshold")
                 + f"<p class='note'>In brackets: {esc(intervals.CLUSTERED_WALD.describe('low', 'high'))} on the log ratio; after the adjusted "
                 "importance ratio, the occupations the fixed-effects model keeps (those with both covered and uncovered rated tasks). "
                 "Simple: shares straight from the task table; adjusted: the regressions of the two sections above.</p>")
    return body


# The page itself is a Jinja2 template (templates/report.html.j2) with autoescape on.
TEMPLATE_DIR = Path(__file__).with_name("templates")
TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    keep_trailing_newline=True,
)


@dataclass(frozen=True)
class Section:
    """One section of the page: the template escapes the title and a plain-text lede; the body
    (and a lede with emphasis) is Markup built by the helpers here, which escape every value."""

    anchor: str
    title: str
    lede: str | Markup
    body: Markup


def _section(anchor: str, title: str, lede: str | Markup, body: str) -> Section:
    return Section(anchor, title, lede, Markup(body))


# The benchmark picker: the data of every benchmark as JSON in the page (escaped for a script block),
# rendered into two tables when a benchmark is picked. Text goes in with textContent, never as HTML.
PICKER_SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('landing-data').textContent);
  var select = document.getElementById('landing-pick');
  function table(id, head, rows) {
    var t = document.getElementById(id); t.textContent = '';
    var tr = document.createElement('tr');
    head.forEach(function (h) { var th = document.createElement('th'); th.textContent = h; tr.appendChild(th); });
    var thead = document.createElement('thead'); thead.appendChild(tr); t.appendChild(thead);
    var body = document.createElement('tbody');
    rows.forEach(function (r) { var row = document.createElement('tr'); r.forEach(function (c) { var td = document.createElement('td'); td.textContent = c; row.appendChild(td); }); body.appendChild(row); });
    t.appendChild(body);
  }
  function show() {
    var b = data[select.value];
    table('landing-occupations', ['occupation', 'family', 'prompts (rank-1 label)', 'share of labeled'], b.occupations);
    table('landing-tasks', ['task', 'occupation', 'its prompts', 'prompts, all benchmarks', 'covered'], b.tasks);
    document.getElementById('landing-summary').textContent = b.summary;
  }
  select.addEventListener('change', show); show();
})();
"""


def landing_body(f: Mapping, labeler: str, threshold: int, top_tasks: int = 25) -> str:
    """The table of where each benchmark lands (report/landing.py), then a picker showing one
    benchmark's occupations and the tasks its labels carry."""
    rows = landing_rows(f["landing"], f["benchmarks"], f["validation"], labeler) if len(f["benchmarks"]) else pd.DataFrame()
    if rows.empty:
        return "<p class='note'>Not computed in this run.</p>"
    shown = rows.assign(
        occupations=rows["top_occupations"].map(shares_text),
        families=rows["top_families"].map(shares_text),
        intent=[("" if _isnan(t) else f"{t:.2f} / {a:.2f} / {'yes' if p else 'no'} ({h})")
                for t, a, p, h in zip(rows["top1_plausible"], rows["any_plausible"], rows["primary_covered"], rows["intent_half"])],
    )
    columns = [("benchmark", "benchmark", None), ("n_prompts_labeled", "labeled", num), ("abstained_share", "abstained", pct),
               ("occupations", "top occupations (share of labeled prompts)", None), ("families", "top families", None),
               ("intent", "intent yardstick: top-1 / any / primary covered", None)]
    body = html_table(shown, columns, scroll=True, table_id="landing-table")
    body += ("<p class='note'>A prompt counts once, for the occupation of its rank-1 label; <i>abstained</i> is a share of the "
             "prompts the judge read. The intent yardstick (kept outside the repository) gives, for some benchmarks, the occupations "
             "where the work its paper describes plausibly belongs: <i>top-1</i> is the share of labeled prompts whose rank-1 label is "
             "in one of them, <i>any</i> the share with some label in one, <i>primary</i> whether the most direct occupation has a "
             f"covered task (at least {threshold} prompts).</p>")
    data = {}
    landing, tasks = f["landing"], f["benchmark_tasks"]
    landings, task_lists = by_benchmark(landing), by_benchmark(tasks)
    for r in rows.itertuples(index=False):
        mine = landings.get(r.benchmark, landing.iloc[0:0])
        all_theirs = task_lists.get(r.benchmark, tasks.iloc[0:0])
        theirs = all_theirs.head(top_tasks)
        data[r.benchmark] = {
            "summary": f"{r.benchmark}: {r.n_prompts_labeled:,} of {r.n_prompts:,} prompts labeled; the {min(len(theirs), top_tasks)} tasks its labels "
                       f"carry most, of {len(all_theirs)}.",
            "occupations": [[o, fam, f"{n:,}", f"{sh:.1%}"] for o, fam, n, sh in
                            zip(mine.get("occupation_title", []), mine.get("family_title", []), mine.get("n_prompts_top1", []), mine.get("share_of_labeled", []))],
            "tasks": [[t, o, f"{n:,}", f"{a:,}", "yes" if c else "no"] for t, o, n, a, c in
                      zip(theirs.get("task", []), theirs.get("occupation_title", []), theirs.get("n_prompts", []), theirs.get("n_prompts_all", []), theirs.get("covered", []))],
        }
    options = "".join(f'<option value="{esc(b)}">{esc(b)}</option>' for b in data)
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    body += (f"<h3>One benchmark</h3><p><label for='landing-pick'>Benchmark: </label><select id='landing-pick'>{options}</select></p>"
             "<p class='note' id='landing-summary'></p>"
             "<div class='scroll'><table id='landing-occupations'></table></div><div class='scroll'><table id='landing-tasks'></table></div>"
             f"<script type='application/json' id='landing-data'>{payload}</script><script>{PICKER_SCRIPT}</script>")
    return body


def history_body(f: Mapping, drawable: set[str]) -> str:
    """The trend over refreshes, and each benchmark's contribution as a figure with its table beside."""
    history = f["history"]
    body = figure_div(figures.coverage_history(history), "coverage-history") if "coverage_history" in drawable else "<p class='note'>No refresh recorded yet.</p>"
    if len(history):
        last = history.iloc[-1]
        body += (f"<p class='note'>The refreshes that moved the map: {len(history)}, of the headline's materializations that Dagster "
                 f"recorded (the last of them, refresh {int(last.refresh)} on {esc(str(last.materialized_at)[:16])} UTC, changed "
                 f"{esc(figures.refresh_note(last.to_dict())) or 'the numbers only'}). analysis.coverage_history has a row for every "
                 "materialization, those that changed nothing included.</p>")
    contribution_cols = [("benchmark", "benchmark", None), ("n_prompts_labeled", "prompts labeled", num),
                         ("n_tasks_covered_only_with_it", "tasks only with it", num),
                         ("n_occupations_covered_only_with_it", "occupations only with it", num),
                         ("change_without_it", "more work time uncovered without it", lambda v: pct(v, 2))]
    table = html_table(f["contribution"], contribution_cols, scroll=True, table_id="benchmark-contribution")
    chart = figure_div(figures.benchmark_contribution(f["contribution"]), "benchmark-contribution-figure") if "benchmark_contribution" in drawable else ""
    body += f"<h3>Each benchmark's contribution</h3><div class='side-by-side'><div>{chart}</div><div>{table}</div></div>"
    return body


def methodology(settings: Mapping, headline: Mapping, data_versions: pd.DataFrame, labelers: pd.DataFrame | None = None) -> str:
    """`labelers`: marts.dim_labeler (labeler, rule): the active labeler's rule is its own, in words."""
    s = settings
    rules = dict(zip(labelers["labeler"], labelers["rule"])) if labelers is not None and len(labelers) else {}
    rule = rules.get(s["active_labeler"])
    definition = "E1 or E2" if s["exposure_definition"] == "e1_e2" else "E1 only"
    split = "split equally among them" if s["employment_split"] == "equal" else "given in full to each"
    items = [
        ("Universe", f"{num(headline.get('n_tasks'))} O*NET 29.3 task statements in {num(headline.get('n_occupations'))} occupations and "
                     f"{num(headline.get('n_families'))} SOC 2018 major groups (families)."),
        ("Covered task", f"labeled on at least <b>{esc(s['coverage_threshold'])}</b> distinct prompts (sensitivity: thresholds "
                         f"{esc(', '.join(str(t) for t in s['sensitivity_thresholds']))})."),
        ("Labeler", f"<code>{esc(s['active_labeler'])}</code> feeds the marts. Retrieval: the {esc(s['candidates_per_occupation'])} most similar tasks of "
                    f"each of the {esc(s['n_candidate_occupations'])} best-matching occupations plus the {esc(s['candidates_nearest'])} nearest tasks "
                    f"(model {esc(s['embedding_model'])}); the judge then {esc(rule) if rule else 'chooses among them'}. Long prompts are embedded in "
                    f"{WORDS_PER_CHUNK}-word windows; prompts not in English are left unlabeled."),
        ("Employment", f"OEWS May 2024 national, detailed rows; an OEWS code shared by several O*NET occupations is {split} "
                       f"({num(headline.get('total_employment'))} jobs in all)."),
        ("Work time", f"hours on a task = employment × {esc(s['hours_per_year'])} h × the task's time share (hours per day / {esc(s['hours_per_day'])}); "
                      "missing shares take the occupation's median, or importance-proportional shares where an occupation has none."),
        ("AI exposure", f"Eloundou et al. (2023), rater <b>{esc(s['exposure_rater'])}</b>, exposed = {definition}."),
        ("Regressions", f"logit covered ~ exposed + log wage bill, SEs clustered by SOC {esc(s['cluster_level'])} group; importance quintiles "
                        "with occupation fixed effects; 95% intervals for probabilities built on the logit scale and transformed back, so they stay inside [0, 1] (ratios: the delta method on the log ratio)."),
        ("Model scores", f"a task enters an occupation's score with at least {esc(s['min_prompts_per_task'])} scored prompts; weighted = mean of task means, "
                         "simple = mean over the distinct prompts."),
        ("WORKBank zones", "cut at 3.0 on worker desire and expert capability (Green Light: both ≥ 3)."),
    ]
    settings_html = "<dl class='settings'>" + "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"
    versions = html_table(
        data_versions,
        [("file", "file", None), ("bytes", "bytes", lambda v: num(v)), ("sha256", "SHA-256 (first 16)", lambda v: str(v)[:16])],
        scroll=True,
    )
    return (
        settings_html
        + "<h3>Data versions</h3><p class='note'>The files this report was built from, as the warehouse's loads recorded them "
        "(the same hashes are the data versions of the <code>files/*</code> assets in Dagster).</p>"
        + versions
        + "<p class='note'>Full specification: docs/method.md in the repository; its README says how each number was measured "
        "and how to cite it (CITATION.cff).</p>"
    )


def attribution(reference: list[dict], benchmarks: pd.DataFrame) -> str:
    """`benchmarks`: benchmark, full_name, licence (marts.dim_benchmark)."""
    works = "".join(f"<li><b>{esc(t)}</b>. {esc(c)} Licence: {esc(lic)}.</li>" for t, c, lic in WORKS)
    ref = html_table(pd.DataFrame(reference), [("table", "table", None), ("file", "file", None), ("origin", "origin", None), ("licence", "licence", None)])
    bench = html_table(
        benchmarks if len(benchmarks) else pd.DataFrame(columns=["benchmark", "full_name", "licence"]),
        [("benchmark", "benchmark", None), ("full_name", "full name", None), ("licence", "licence (as stated by the source)", None)],
    )
    return (
        f"<p><b>{esc(ONET_CREDIT)}</b></p><ul>{works}</ul><h3>Reference files</h3>{ref}"
        "<h3>Benchmarks</h3><p class='note'>Prompts are the benchmarks' own text; licences as the repository's benchmarks/catalog.csv "
        "records them (benchmarks/NOTICE.md; for a benchmark read from a folder, that folder's SOURCES.md). \"Not stated\" means the "
        "source states none. Per-prompt model results come from the published runs the catalog names.</p>"
        + bench
    )


def render_report(
    frames: Mapping[str, pd.DataFrame],
    headline: Mapping,
    settings: Mapping,
    data_versions: pd.DataFrame,
    reference: list[dict],
    benchmarks: pd.DataFrame,
    downloads: list[tuple[str, str]],
) -> str:
    f = frames
    threshold = settings["coverage_threshold"]
    drawable = set(available_figures(f))
    parts: list[Section] = []

    if "benchmark_map" in drawable:
        body = figure_div(figures.benchmark_map(f["occupations"], f["families"], threshold), "benchmark-map")
        body += ("<p class='note'>Click a family to expand it into its occupations; click the path bar above the map to go back. "
                 "Hover a tile for its tasks covered, employment and the benchmarks that reach it (prompts labeled with any of its tasks).</p>")
    else:
        body = "<p class='note'>Not computed in this run.</p>"
    parts.append(_section("map", "Benchmark map", f"Each tile is one of the {len(f['occupations'])} O*NET occupations, grouped into "
                          f"{len(f['families'])} families and shaded by the share of its tasks covered by at least {threshold} benchmark prompts.", body))
    parts.append(_section("limitations", "Limitations", "Where the figures of this report stop, and what they rest on: each from this run's outputs.",
                          limitations_body(headline, f)))

    parts.append(_section("landing", "Where each benchmark lands", "Per benchmark: the occupations and families its labeled prompts "
                          "land in (by their rank-1 label), how many the judge abstained on, and how that compares with the work the "
                          "benchmark says it asks for. Pick a benchmark to see its occupations and the tasks its labels carry.",
                          Markup(landing_body(f, headline.get("labeler", ""), threshold))))

    fam_cols = [("family_title", "family", None), ("n_occupations_with_coverage", "occupations with coverage", num), ("n_occupations", "occupations", num),
                ("n_tasks_covered", "tasks covered", num), ("n_tasks", "tasks", num), ("share_uncovered", "work hours uncovered", pct)]
    families = f["families"].assign(share_uncovered=f["families"]["hours_uncovered"] / f["families"]["hours"]) if len(f["families"]) else f["families"]
    tele = f["telework"]
    if len(tele):
        tele = tele.assign(share_of_hours=tele["hours_total"] / tele["hours_total"].sum())
    telework = html_table(tele, [("group", "Dingel–Neiman group", None), ("share_of_hours", "share of all work hours", pct),
                                 ("share_uncovered", "hours uncovered", pct),
                                 ("share_of_all_uncovered_hours", "share of all uncovered hours", pct)])
    unmatched = tele.loc[tele["group"] == "unmatched", "share_of_hours"] if len(tele) else pd.Series(dtype="float64")
    body = (figure_div(figures.family_work_time(f["families"]), "family-work-time") if "family_work_time" in drawable else "") + html_table(families, fam_cols)
    body += "<h3>Teleworkable or not</h3>" + telework
    body += ("<p class='note'>Telework scores use the O*NET-SOC 2010 taxonomy; they reach O*NET 29.3 occupations by the same code, "
             "else through the BLS SOC 2010 → 2018 crosswalk (a 2018 code fed by several 2010 codes gets their average). "
             + (f"<b>{pct(unmatched.iloc[0])}</b> of all work hours are still 'unmatched' (no score either way)." if len(unmatched)
                else "Occupations with no score either way are 'unmatched'.") + "</p>")
    parts.append(_section("work-time", "Where US work time goes uncovered",
                          f"Work hours = OEWS employment × {settings['hours_per_year']:,} h × each task's time share.", body))

    ratio = f["coverage_ratio"]
    lede = Markup("Task-level logit of coverage on AI exposure and the log wage bill of the task's occupation.")
    if len(ratio) and not _isnan(ratio.iloc[0].estimate):
        r = ratio.iloc[0]
        lede += Markup(" At the median wage bill, exposed tasks are <b>{}×</b> as likely to be covered ({}; {} tasks, {} clusters). "
                       "The wage bill: {}.").format(
            f"{r.estimate:.2f}", intervals.CLUSTERED_WALD.describe(f"{r.ci_low:.2f}", f"{r.ci_high:.2f}"), num(r.n_obs), int(r.n_clusters),
            article.wage_bill_finding(f.get("coverage_coefs", pd.DataFrame())),
        )
    body = figure_div(figures.coverage_curves(f["coverage_curve"]), "coverage-curves") if "coverage_curves" in drawable else NOT_ESTIMABLE
    parts.append(_section("exposure", "Coverage, AI exposure and wages", lede, body))

    ratio = f["importance_ratio"]
    lede = Markup("Adjusted probability of coverage by importance quintile, with occupation fixed effects.")
    if len(ratio) and not _isnan(ratio.iloc[0].estimate):
        r = ratio.iloc[0]
        lede += Markup(" Top vs bottom quintile: <b>{}×</b> ({}), on the {} occupations whose tasks are neither all covered nor all uncovered; "
                       "{} occupations with all or none of their tasks covered leave the sample.").format(
            f"{r.estimate:.2f}", intervals.CLUSTERED_WALD.describe(f"{r.ci_low:.2f}", f"{r.ci_high:.2f}"), int(r.occupations_kept), int(r.occupations_dropped)
        )
    body = figure_div(figures.importance_figure(f["importance"]), "importance-quintiles") if "importance_quintiles" in drawable else NOT_ESTIMABLE
    parts.append(_section("importance", "Coverage and task importance", lede, body))
    parts.append(_section("like-for-like", "Like for like with the article", "The article's published figures beside ours, each ratio both as a "
                          "plain ratio of shares and as the regressions adjust it, and what differs between its inputs and ours.",
                          like_for_like_body(headline, f)))

    sens_cols = [("variant", "variant", None), ("threshold", "threshold", num), ("labeler", "labeler", None),
                 ("n_tasks_covered", "tasks covered", num), ("n_occupations_with_covered_task", "occupations with coverage", num),
                 ("n_families_without_covered_occupation", "families without", num), ("work_time_share_uncovered", "work time uncovered", pct)]
    body = html_table(f["sensitivity"], sens_cols, scroll=True)
    if len(f["uncovered_interval"]):
        u = f["uncovered_interval"].iloc[0]
        body += (f"<p class='note'>Bootstrap ({int(u.replicates)} replicates, prompts resampled within benchmarks): uncovered work time "
                 f"{pct(u.share_uncovered)}, resampling spread {pct(u.ci_low)}–{pct(u.ci_high)} ({esc(u.method)}; plain percentile "
                 f"{pct(u.ci_low_percentile)}–{pct(u.ci_high_percentile)}).</p>")
    body += band_note(f.get("band", pd.DataFrame()), f.get("calibration", pd.DataFrame()))
    parts.append(_section("sensitivity", "Sensitivity", "The headline under other thresholds, other judges, each benchmark left out, and duplicate texts counted once.", body))
    parts.append(_section("history", "How the map moved", "Every refresh of the headline, with the benchmarks it added (+), changed (~) "
                          "or removed (−), and what each benchmark adds to the coverage today.", history_body(f, drawable)))
    parts.append(_section("judges", "The judges, validated", "How often each judge agrees with labels it did not make: the benchmark authors' "
                          "occupations and roles (labels_dev, on the half no judge was tuned on) and a reference set labeled by an AI model "
                          "(Claude) by careful reading. An abstained prompt counts as a miss.", judges_body(f)))

    diff_cols = [("label", "occupation · tasks · prompts", None), ("model", "model", None), ("benchmark", "benchmark", None),
                 ("weighted_score", "O*NET-weighted", lambda v: num(v, 3)), ("simple_score", "simple", lambda v: num(v, 3)), ("gap", "gap", lambda v: num(v, 3))]
    body = figure_div(figures.model_scores_figure(f["model_scores"]), "model-scores") if "model_scores" in drawable else ""
    differences = f["score_differences"]
    if len(differences) and "n_prompts_weak" in differences:
        weak = differences["n_prompts_weak"]
        differences = differences.assign(caveat=[
            "" if _isnan(w) or not w else ("mostly weak labels" if 2 * w > n else "some weak labels") for w, n in zip(weak, differences["n_prompts"])
        ])
        diff_cols = [*diff_cols, ("n_prompts_weak", "prompts with weak labels", num), ("caveat", "caveat", None)]
    body += ("<h3>Largest differences between the weighted and the simple score</h3><p class='note'>A prompt's labels are weak when the judge "
             "itself would have abstained on it (its confidence or its rank-1 task's similarity below its own bars) but its benchmark had reached "
             "the abstention cap: a row resting mostly on such prompts says more about the judge than about the occupation.</p>"
             + html_table(differences, diff_cols))
    parts.append(_section("scores", "O*NET-weighted vs simple model scores",
                          f"Per model and occupation: tasks with at least {settings['min_prompts_per_task']} scored prompts; the weighted score counts "
                          "every task equally, the simple score every prompt.", body))

    zone_cols = [("zone", "zone", None), ("n_tasks", "tasks", num), ("n_covered", "covered", num), ("share_covered", "share covered", pct),
                 ("hours", "work hours", lambda v: num(v))]
    green_cols = [("occupation_title", "occupation", None), ("task", "task", None), ("mean_desire", "desire", lambda v: num(v, 1)),
                  ("mean_capability", "capability", lambda v: num(v, 1)), ("n_prompts", "prompts", num), ("hours", "US work hours / yr", lambda v: num(v))]
    body = figure_div(figures.workbank_landscape(f["zones"]), "workbank-landscape") if "workbank_landscape" in drawable else ""
    body += "<h3>Coverage by zone</h3>" + html_table(f["coverage_by_zone"], zone_cols)
    green = f["green_light"]
    some = int((green["n_prompts"] > 0).sum()) if len(green) else 0
    body += (f"<h3>Green Light tasks with fewer than {threshold} prompts (the threshold): {len(green)}</h3><p class='note'>Workers want them automated "
             f"and experts rate agents capable, yet fewer than {threshold} prompts exercise them ({len(green) - some} none, {some} between 1 and "
             f"{threshold - 1}): ranked by US work hours, the benchmarks nobody has built.</p>")
    body += html_table(f["green_light"], green_cols, scroll=True, table_id="green-light")
    parts.append(_section("workbank", "Where benchmarks and workers meet", "WORKBank tasks placed by worker desire and expert-rated capability.", body))

    bench = f["benchmarks"]
    if len(bench):
        bench = bench.assign(example_prompt=bench["example_prompt"].map(lambda t: t if len(t) <= 220 else t[:220] + "…"))
    bench_cols = [("benchmark", "benchmark", None), ("n_prompts", "prompts", num), ("n_prompts_labeled", "labeled", num), ("n_labels", "labels", num),
                  ("n_tasks_touched", "tasks touched", num), ("n_covered_tasks_touched", "covered tasks touched", num),
                  ("n_occupations_touched", "occupations touched", num), ("n_families_reached", "families reached", num),
                  ("example_prompt", "first prompt (by id)", None)]
    parts.append(_section("benchmarks", "Benchmark index", "Per benchmark: its prompts, and the tasks, occupations and families its labels reach.",
                          html_table(bench, bench_cols, scroll=True, table_id="benchmark-index")))

    parts.append(_section("methodology", "Methodology (from the settings of this run)", "Generated from the settings the pipeline ran with.",
                          methodology(settings, headline, data_versions, f.get("labelers"))))
    parts.append(_section("attribution", "Attribution and licences", "Where every source came from and under which terms.", attribution(reference, benchmarks)))
    links = "".join(f'<li><a href="{esc(href)}">{esc(text)}</a></li>' for href, text in downloads)
    parts.append(_section("downloads", "Downloads", "Every mart and analysis table, the data dictionary and the figures, beside this file.", f"<ul>{links}</ul>"))

    return TEMPLATES.get_template("report.html.j2").render(
        title="Which work do AI benchmarks measure?",
        heading="Which work do AI benchmarks actually measure?",
        css=Markup(CSS),
        plotlyjs=Markup(get_plotlyjs()),
        n_prompts=num(headline.get("n_prompts")),
        n_benchmarks=esc(headline.get("n_benchmarks")),
        n_tasks=num(headline.get("n_tasks")),
        n_occupations=num(headline.get("n_occupations")),
        cards=Markup(headline_cards(headline)),
        labeler_line=Markup(labeler_line(headline)),
        rejected_files=Markup(rejected_files_notice(f.get("rejected_files"))),
        nav=SECTIONS,
        sections=parts,
        credit=ONET_CREDIT,
        version=version_line(headline.get("version")),
    )


def version_line(stamp: Mapping | None) -> str:
    """The footer's citation line: package version, commit, labeler and data snapshot (headline.json's `version`)."""
    if not stamp:
        return ""
    parts = [f"{stamp.get('package', 'workbank-dagster')} {stamp.get('package_version') or '(version unknown)'}"]
    if stamp.get("commit"):
        parts.append(f"commit {stamp['commit'][:12]}" + (" with uncommitted changes" if stamp.get("commit_dirty") else ""))
    parts.append(f"labeler {stamp.get('labeler')}")
    if stamp.get("data_snapshot"):
        parts.append(f"data snapshot sha256:{stamp['data_snapshot'][:16]} ({stamp.get('data_files')} input files)")
    return "Version: " + "; ".join(parts) + "."
