"""The bodies of the report page's sections: judges, limitations, like for like, where the
benchmarks land (with its picker), history, methodology, attribution, and the label-uncertainty
note of the sensitivity section.

Each function takes the run's frames (or the headline, the settings) and returns an HTML string in
which every value that comes from data went through `figures.esc`; page.py places them in the
page's sections (some sections' bodies are short enough to stay written there).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from ..settings import WORDS_PER_CHUNK
from . import article, figures, intervals
from .attribution import ONET_CREDIT, WORKS
from .elements import figure_div, html_table
from .figures import esc
from .formats import isnan as _isnan
from .formats import num, pct
from .landing import landing_rows, rows_by_benchmark, shares_text
from .limits import band_position, limitations


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
    # Each benchmark's rows as plain tuples, read in one pass: slicing and reading the frames per
    # benchmark took ~1 s of the report at 1,000 benchmarks (20k landing rows, 119k task rows).
    landings = rows_by_benchmark(f["landing"], ["occupation_title", "family_title", "n_prompts_top1", "share_of_labeled"])
    task_lists = rows_by_benchmark(f["benchmark_tasks"], ["task", "occupation_title", "n_prompts", "n_prompts_all", "covered"])
    for r in rows.itertuples(index=False):
        mine = landings.get(r.benchmark, [])
        all_theirs = task_lists.get(r.benchmark, [])
        theirs = all_theirs[:top_tasks]
        data[r.benchmark] = {
            "summary": f"{r.benchmark}: {r.n_prompts_labeled:,} of {r.n_prompts:,} prompts labeled; the {min(len(theirs), top_tasks)} tasks its labels "
                       f"carry most, of {len(all_theirs)}.",
            "occupations": [[o, fam, f"{n:,}", f"{sh:.1%}"] for o, fam, n, sh in mine],
            "tasks": [[t, o, f"{n:,}", f"{a:,}", "yes" if c else "no"] for t, o, n, a, c in theirs],
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
