"""The self-contained HTML report: the page's shell (style, navigation, header cards, footer) and
`render_report`, which fills its sections.

`render_report` is pure: frames, headline numbers, settings and data versions in, one HTML string
out. plotly.js is inlined once, so the file works opened from disk with no network. The sections'
longer bodies are built in sections.py, tables and figures by elements.py; every value that comes
from data goes through `figures.esc` (tables and figures): a prompt that contains `<script>` is
shown as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pandas as pd
from markupsafe import Markup
from plotly.offline import get_plotlyjs

from . import article, figures, intervals
from .attribution import ONET_CREDIT
from .bars import FAMILY_BAR
from .elements import figure_div, html_table
from .figures import available_figures, esc
from .formats import isnan as _isnan
from .formats import num, pct
from .sections import (
    attribution,
    band_note,
    history_body,
    judges_body,
    landing_body,
    like_for_like_body,
    limitations_body,
    methodology,
)

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
    (and a lede with emphasis) is Markup built by the helpers here, in sections.py and in elements.py,
    which escape every value."""

    anchor: str
    title: str
    lede: str | Markup
    body: Markup


def _section(anchor: str, title: str, lede: str | Markup, body: str) -> Section:
    return Section(anchor, title, lede, Markup(body))


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
