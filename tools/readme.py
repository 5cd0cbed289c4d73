"""The result tables of the README and of the pages in docs/, written from a run's outputs, never typed.

Each table sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` in one of the
DOCUMENTS (README.md, docs/*.md); a name is used once across them.
`.venv/bin/python tools/readme.py` rewrites them from the last run (headline.json, the warehouse's
validation and sensitivity tables, bench/*.json); `--check` only says whether they match. The
end-to-end test renders them from its own run and fails when a document says anything else.

Not part of the pipeline: no asset reads the README, so this lives beside the package (tools/), not
in it, and imports the package as the bench scripts do.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from workbank_dagster.report import article, intervals  # noqa: E402
from workbank_dagster.report.article import ARTICLE  # noqa: E402
from workbank_dagster.report.bars import BARS  # noqa: E402
from workbank_dagster.report.landing import landing_rows, shares_text  # noqa: E402
from workbank_dagster.report.limits import band_position, limitations  # noqa: E402
from workbank_dagster.report.tables import report_frames  # noqa: E402

# The README's short Limitations block: the limits the issue asked it to name, in this order
# (keys of the report's limitations, report/limits.py).
README_KEYS = ("language", "cap", "time_shares", "sizes", "precision", "llm")
# The measured figures the generated blocks render besides a run's outputs, by `sections`'
# argument: bench/<file>.json, each written by the bench script of the same name.
BENCH_FILES = {
    "bench": "results", "coverage": "interval_coverage", "comparison": "warm_comparison", "variants": "judge_variants",
    "postgres": "postgres_overhead", "throughput": "partition_throughput", "band_coverage": "label_band_coverage",
    "staleness": "staleness_agreement",
}

REFERENCE_SUBSETS = ("holdout", "tune", "all")
REFERENCE_LEVELS = (
    ("task", "task, exact ID"),
    ("task_same_statement", "task, identical statements as one"),
    ("dwa", "detailed work activity"),
    ("occupation", "occupation"),
    ("family", "family"),
)
_BLOCK = re.compile(r"(<!-- generated:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.DOTALL)


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.{digits}f}%"


def num(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _labeler_name(labeler: str, active: str) -> str:
    version = labeler.rsplit(":", 1)[-1]
    method = labeler.split(":", 1)[0]
    return f"{method} {version}" + (" (default)" if labeler == active else "")


class RunOutputs:
    """What the tables are made from: headline.json and the warehouse of one run."""

    def __init__(self, headline: dict, con: duckdb.DuckDBPyConnection) -> None:
        self.headline = headline
        self.validation = con.execute(
            "select labeler, yardstick, subset, benchmark, level, metric, value, ci_low, ci_high, n_prompts from marts.fct_judge_validation"
        ).fetchall()
        self.sensitivity = con.execute(
            "select variant, threshold, labeler, n_tasks_covered, n_occupations_with_covered_task, "
            "n_families_without_covered_occupation, work_time_share_uncovered from analysis.coverage_sensitivity"
        ).df()
        self.interval = con.execute(
            "select share_uncovered, ci_low, ci_high, ci_low_percentile, ci_high_percentile, replicates from analysis.work_time_uncovered_interval"
        ).fetchone()
        one = lambda sql: con.execute(sql).df()  # noqa: E731
        self.coverage_ratio = one("select * from analysis.coverage_logit_ratio")
        self.importance_ratio = one("select * from analysis.importance_logit_ratio")
        self.judge_ratios = one("select * from analysis.judge_ratios order by labeler")
        self.zones = one("select zone, n_tasks, n_covered, share_covered from analysis.coverage_by_zone")
        self.green = one("select occupation_title, task, hours, n_prompts from analysis.unbenchmarked_green_light order by hours desc, task_id limit 3")
        self.telework = one("select * from analysis.uncovered_by_telework")
        self.gaps = one(
            "select model, benchmark, label, weighted_score, simple_score from analysis.model_score_differences order by gap desc, model limit 2"
        )
        self.audit = (
            one("select task_id, input_task, onet_soc_code, onet_task, zone, n_prompts, covered from analysis.user_audit where audit = 'example-org' order by row")
            if con.execute("select count(*) from information_schema.tables where table_schema = 'analysis' and table_name = 'user_audit'").fetchone()[0]
            else None
        )
        # The report's own frames (tables.py): the limitations and the like-for-like rows are built from them, here as on the page.
        self.frames = report_frames(con)
        self.validation_frame = self.frames["validation"]
        self.landing = self.frames["landing"]
        self.benchmark_index = self.frames["benchmarks"]
        self.status = dict(
            con.execute(
                "select status, count(*) from marts.fct_prompt_judgements where labeler = ? group by status", [headline["labeler"]]
            ).fetchall()
        )

    @classmethod
    def read(cls, headline_path: Path, duckdb_path: Path) -> RunOutputs:
        con = duckdb.connect(str(duckdb_path), read_only=True)
        try:
            return cls(json.loads(Path(headline_path).read_text()), con)
        finally:
            con.close()

    def figure(self, labeler: str, yardstick: str, subset: str, benchmark: str, level: str, metric: str):
        for row in self.validation:
            if row[:6] == (labeler, yardstick, subset, benchmark, level, metric):
                return row[6:]
        return (None, None, None, None)

    def labelers(self) -> list[str]:
        """Every embedded labeler scored, the active one first."""
        found = sorted({row[0] for row in self.validation})
        active = self.headline["labeler"]
        return sorted(found, key=lambda name: (name != active, name))


def _uncertainty(h: dict) -> str:
    """The uncovered share's two intervals, short: the resampling spread and the label-uncertainty band."""
    bounds = [(name, h.get(low), h.get(high)) for name, (low, high) in (
        ("resampling spread", intervals.BOOTSTRAP_SPREAD.keys("work_time_share_uncovered")),
        ("label-uncertainty band", intervals.LABEL_BAND.keys(intervals.LABEL_BAND_PREFIX)),
    )]
    shown = [f"{name} {pct(low)}–{pct(high)}" for name, low, high in bounds if low is not None and high is not None]
    return f"; {', '.join(shown)}: each not a confidence interval" if shown else ""


def headline_table(run: RunOutputs) -> str:
    h = run.headline
    threshold = {int(r.threshold): r.work_time_share_uncovered for r in run.sensitivity.itertuples() if r.variant == "threshold"}
    others = ", ".join(f"{t}: {pct(threshold[t])}" for t in sorted(threshold) if t != h["coverage_threshold"])
    rows = [
        ["tasks / occupations / families", f"{num(h['n_tasks'])} / {num(h['n_occupations'])} / {num(h['n_families'])}", f"{ARTICLE['tasks']:,} / 923 / 22"],
        ["benchmarks / prompts", f"{num(h['n_benchmarks'])} / {num(h['n_prompts'])} ({num(h['n_duplicate_prompt_texts'])} duplicate texts)", f"{ARTICLE['benchmarks']} / —"],
        [
            "prompts labeled / abstained / not English",
            f"{num(h['n_prompts_labeled'])} / {num(h.get('n_prompts_abstained'))} / {num(h['n_prompts_unlabeled_language'])}",
            "—",
        ],
        ["labels (per labeled prompt; per prompt, all prompts)", f"{num(h['n_labels'])} ({h['labels_per_labeled_prompt']:.2f}; {h['labels_per_prompt']:.2f})", "—"],
        [f"tasks covered (≥ {h['coverage_threshold']} prompts)", num(h["n_tasks_covered"]), "—"],
        ["occupations with a covered task", num(h["n_occupations_with_covered_task"]), ARTICLE["occupations"].split(" of")[0]],
        ["families without a covered occupation", num(h["n_families_without_covered_occupation"]), ARTICLE["families_without"].split(" of")[0]],
        ["share of US work time on uncovered tasks", f"{pct(h['work_time_share_uncovered'])} (threshold {others}){_uncertainty(h)}", ARTICLE["uncovered"].split(" (")[0]],
        ["total employment on the 923 occupations", num(round(h["total_employment"])), ""],
    ]
    return f"Labeler `{h['labeler']}`, coverage threshold {h['coverage_threshold']} prompts:\n\n" + _table(
        ["", "ours", "article (29 benchmarks, its judge)"], rows
    )


def validation_table(run: RunOutputs) -> str:
    active = run.headline["labeler"]
    labelers = run.labelers()
    rows = []
    for key, bar in BARS.items():
        cells = [bar.label]
        for labeler in labelers:
            value, low, high, n = run.figure(labeler, "labels_dev", "holdout", *key)
            interval = f" ({num(low, 2)}–{num(high, 2)})" if low is not None else ""
            verdict = "" if value is None or labeler != active else (" ✓" if bar.met(value) else " ✗")
            cells.append(f"{num(value, 2)}{interval}{verdict}")
        cells.append(bar.text)
        rows.append(cells)
    n_gdpval = run.figure(active, "labels_dev", "holdout", "gdpval", "family", "top1")[3]
    n_tac = run.figure(active, "labels_dev", "holdout", "theagentcompany", "family", "top1")[3]
    abstained = [num(run.figure(labeler, "labels_dev", "holdout", "all", "all", "abstained_share")[0], 2) for labeler in labelers]
    rows.append(["abstained (counted as misses above)", *abstained, "≤ 0.20 per benchmark"])
    header = ["held-out half of labels_dev", *(_labeler_name(name, active) for name in labelers), "bar"]
    intro = (
        f"On the `holdout` half of labels_dev ({num(n_gdpval)} GDPval prompts of occupations, {num(n_tac)} TheAgentCompany "
        "prompts of roles that were not tuned on), with Wilson 95% intervals (labels per prompt: a normal interval):\n\n"
    )
    tune = ["", "Tuned on (`tune` half), for comparison:", ""]
    tune_rows = []
    for key, bar in BARS.items():
        tune_rows.append([bar.label, *(num(run.figure(labeler, "labels_dev", "tune", *key)[0], 2) for labeler in labelers)])
    ref_rows = []
    for level, label in REFERENCE_LEVELS:
        cells = [label]
        for labeler in labelers:
            for subset in REFERENCE_SUBSETS:
                p = run.figure(labeler, "reference", subset, "all", level, "precision")[0]
                r = run.figure(labeler, "reference", subset, "all", level, "recall")[0]
                cells.append(f"{num(p)} / {num(r)}")
        ref_rows.append(cells)
    ref_rows.append(
        [
            "labels per prompt",
            *(num(run.figure(labeler, "reference", subset, "all", "all", "labels_per_prompt")[0], 2) for labeler in labelers for subset in REFERENCE_SUBSETS),
        ]
    )
    intent_rows = []
    for subset in ("holdout", "tune"):
        for metric, label in INTENT_FIGURES:
            intent_rows.append([f"{label}, {subset}", *(num(run.figure(labeler, "intent", subset, "all", "occupation", metric)[0], 2) for labeler in labelers)])
    intent = ""
    if any(cell != "—" for row in intent_rows for cell in row[1:]):
        intent = (
            "\nBenchmark-intent yardstick (the work each benchmark's paper says it asks for: the occupations where it plausibly belongs "
            "and the one it most directly is), the mean over the benchmarks of each half of its split by benchmark "
            f"({', '.join(_intent_benchmarks(run, 'holdout'))} held out); per benchmark in [where each benchmark lands](#where-each-benchmark-lands):\n\n"
            + _table(["intent yardstick", *(_labeler_name(name, active) for name in labelers)], intent_rows)
        )
    n_ref = {subset: run.figure(active, "reference", subset, "all", "task", "precision")[3] for subset in REFERENCE_SUBSETS}
    ref_header = ["level", *(f"{_labeler_name(name, active)}, {subset}" for name in labelers for subset in REFERENCE_SUBSETS)]
    return (
        intro
        + _table(header, rows)
        + "\n".join(tune)
        + "\n"
        + _table(["tune half", *(_labeler_name(name, active) for name in labelers)], tune_rows)
        + f"\nReference set ({num(n_ref['all'])} prompts labeled by task ID), micro precision / recall, on the `holdout` half of its "
        f"split by benchmark ({num(n_ref['holdout'])} prompts, not tuned on), the `tune` half ({num(n_ref['tune'])}) and all:\n\n"
        + _table(ref_header, ref_rows)
        + intent
    )


INTENT_FIGURES = (
    ("top1_plausible", "top label in a plausible occupation"),
    ("any_plausible", "any label in a plausible occupation"),
    ("primary_covered", "primary occupation has a covered task (share of benchmarks)"),
)


def _intent_benchmarks(run: RunOutputs, subset: str) -> list[str]:
    """The benchmarks of one half of the intent yardstick that the active labeler was scored on."""
    v = run.validation_frame
    if v is None or v.empty:
        return []
    mine = v[(v["labeler"] == run.headline["labeler"]) & (v["yardstick"] == "intent") & (v["subset"] == subset) & (v["benchmark"] != "all")]
    return sorted(set(mine["benchmark"]))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def analysis_table(run: RunOutputs) -> str:
    """Like for like with the article (article.py): the rows the headline table does not already set beside the
    article's (the report's table has every row)."""
    rows = [[_cell(what), _cell(ours), _cell(theirs)] for what, ours, theirs in article.like_for_like(run.headline, run.frames, compact=True)]
    return _table(["", "ours", "article"], rows)


def limitations_text(run: RunOutputs) -> str:
    """The README's short Limitations block: the report's limitations of README_KEYS, one line each."""
    found = {item.key: item for item in limitations(run.headline, run.frames)}
    return "".join(f"- **{found[key].title}.** {found[key].text}\n" for key in README_KEYS if key in found)


def ratio_thresholds_table(run: RunOutputs) -> str:
    """Both ratios, simple and adjusted, at every threshold (docs/analysis.md), as the report's table."""
    header, rows = article.ratios_by_threshold(run.headline, run.frames)
    return _table(header, rows) + (
        "\nIn brackets: the 95% CI (cluster-robust Wald, delta method on the log ratio); after the adjusted importance ratio, the occupations "
        "the fixed-effects model keeps.\n"
    )


def band_text(run: RunOutputs, coverage: dict) -> str:
    """The label-uncertainty band of the run, its calibration, and how often such a band covers the
    truth in the simulation (bench/label_band_coverage.json)."""
    b = run.frames["band"].iloc[0]
    c = run.frames["calibration"]
    tune = c[c["fitted_on"]].iloc[0]
    checks = "; ".join(
        f"{r.yardstick} {r.subset}: {pct(r.observed_occupation_top1, 0)} observed against {pct(r.mean_calibrated, 0)} predicted "
        f"(mean p {pct(r.mean_confidence, 0)}; {num(int(r.n_prompts))} prompts)"
        for r in c[~c["fitted_on"]].itertuples()
    )
    scenarios = coverage["scenarios"]
    sim = "; ".join(
        f"{'where the truth is where the band assumes it' if name == 'as_assumed' else 'where it is not (the judge does not know which occupations a benchmark asks for)'}: "
        f"{pct(s['coverage']['calibrated'], 0)} (with the raw confidence, {pct(s['coverage']['raw'], 0)})"
        for name, s in scenarios.items()
    )
    first = next(iter(scenarios.values()))
    return (
        f"Calibration, fitted on the {num(int(tune['n_prompts']))} labeled GDPval prompts of labels_dev's tune half: q = Λ({tune['intercept']:.2f} "
        f"+ {tune['slope']:.2f} · logit(p)), p the judge's probability of its best occupation (standard errors {tune['intercept_se']:.2f} and "
        f"{tune['slope_se']:.2f}); the share of top labels in the right occupation, observed against predicted, on the rest: {checks}.\n\n"
        f"With {num(int(b['draws']))} draws, the uncovered share's {intervals.LABEL_BAND.describe(pct(b['band_low']), pct(b['band_high']))}; tasks covered "
        f"{num(int(b['n_tasks_covered_low']))}–{num(int(b['n_tasks_covered_high']))}, "
        f"occupations with a covered task {num(int(b['n_occupations_low']))}–{num(int(b['n_occupations_high']))}. {band_position(b)}\n\n"
        f"How often such a band covers the true share, in a simulation with known labels (`bench/label_band_coverage.py`, {first['samples']} "
        f"suites of {sum(first['population']['benchmark_sizes']):,} prompts each, a tune set of {first['population']['tune_prompts']} prompts, "
        f"{first['draws']} draws): {sim}. Nominal is 95%: the band is a measure of how far the labels' errors move the share, "
        "**not** a confidence interval.\n"
    )


def sensitivity_table(run: RunOutputs) -> str:
    s = run.sensitivity
    h = run.headline
    rows = []
    for r in s[s["variant"] == "threshold"].sort_values("threshold").itertuples():
        name = f"threshold {r.threshold}" + (" (headline)" if r.threshold == h["coverage_threshold"] else "")
        rows.append([name, num(int(r.n_occupations_with_covered_task)), num(int(r.n_families_without_covered_occupation)), pct(r.work_time_share_uncovered)])
    for r in s[s["variant"] == "duplicate_texts_once"].itertuples():
        rows.append(["duplicate texts counted once", num(int(r.n_occupations_with_covered_task)), num(int(r.n_families_without_covered_occupation)), pct(r.work_time_share_uncovered)])
    out = s[s["variant"].str.startswith("without:")]
    if len(out):
        span = lambda col, f: f"{f(out[col].min())}–{f(out[col].max())}"  # noqa: E731
        rows.append(
            [
                f"leave one benchmark out (range over {len(out)})",
                span("n_occupations_with_covered_task", lambda v: num(int(v))),
                span("n_families_without_covered_occupation", lambda v: num(int(v))),
                span("work_time_share_uncovered", pct),
            ]
        )
    for r in s[s["variant"] == "judge"].sort_values("labeler").itertuples():
        rows.append([f"judge `{r.labeler}`", num(int(r.n_occupations_with_covered_task)), num(int(r.n_families_without_covered_occupation)), pct(r.work_time_share_uncovered)])
    return _table(["variant", "occupations with a covered task", "families without", "work time uncovered"], rows)


# The limits of "Fast feedback" (issue 21), judged from bench/results.json.
SPEED_GOALS = {
    "warm_run_s": ("≤ 30 s", lambda r: r["warm_run_s"] <= 30),
    "add_benchmark_s": ("≤ 45 s", lambda r: r["add_benchmark_s"] <= 45),
    "cold_run_s": ("≤ 400 s", lambda r: r["cold_run_s"] <= 400),
    "peak_rss_mb": ("≤ 3,072 MB", lambda r: max(r["peak_rss_mb_cold"], r["peak_rss_mb_warm"]) <= 3072),
    "suite_ci_s": ("≤ 15 min", lambda r: r["suite_ci_s"] <= 900),
    "suite_not_e2e_s": ("≤ 4 min", lambda r: r["suite_not_e2e_s"] <= 240),
}


def cpu_of(stamp: dict | None) -> str | None:
    """The CPU a bench stamp says its figures were measured on (None when it does not say)."""
    return ((stamp or {}).get("machine") or {}).get("cpu")


def speed_table(bench: dict) -> str:
    def runs(key: str, digits: int = 0) -> str:
        values = bench.get("runs", {}).get(key)
        return "" if not values else " (" + ", ".join(f"{v:.{digits}f}" for v in values) + ")"

    def seconds(key: str, digits: int = 0) -> str:
        return "—" if bench.get(key) is None else f"{bench[key]:.{digits}f} s"

    def minutes(value) -> str:
        return "—" if value is None else f"{value / 60:.1f} min"

    def goal(key: str) -> str:
        text, meets = SPEED_GOALS[key]
        try:
            return f"{text}: {'met' if meets(bench) else 'not met'}"
        except (KeyError, TypeError):
            return f"{text}: not measured"

    rows = [
        ["warm run, nothing changed (`make run` again)", f"**{seconds('warm_run_s', 1)}**{runs('warm_run_s', 1)}", goal("warm_run_s")],
        ["a new ~200-prompt benchmark through the sensor path to headline.json", f"{seconds('add_benchmark_s', 1)}{runs('add_benchmark_s', 1)}", goal("add_benchmark_s")],
        ["cold run from an empty `data/` (environment installed)", f"**{seconds('cold_run_s')}**{runs('cold_run_s')}", goal("cold_run_s")],
        ["… of which labeling all benchmarks (`embedded_labels`)", seconds("label_cold_s"), ""],
        [
            f"embedding floor: the {num(bench.get('embed_floor_texts'))} texts a cold run embeds, same model and backend "
            f"({bench.get('embed_floor_backend', 'torch')}), one plain process",
            f"{seconds('embed_floor_s')}{runs('embed_floor_s')}",
            f"cold / floor = {num(bench.get('cold_over_floor'), 2)}",
        ],
    ]
    if bench.get("embed_floor_torch_s") is not None:
        # A ratio only between figures of one machine (the torch floor may be kept from an older bench).
        torch_stamp = bench.get("embed_floor_torch_measured") or {}
        if cpu_of(torch_stamp) == cpu_of(bench.get("measured", {}).get("cold")):
            figure, verdict = seconds("embed_floor_torch_s"), f"ONNX {bench['embed_floor_torch_s'] / bench['embed_floor_s']:.2f}× faster"
        else:
            figure = f"{seconds('embed_floor_torch_s')} on {cpu_of(torch_stamp)} at {torch_stamp.get('commit')}"
            verdict = "not comparable: another machine than the floor's"
        rows.append(["… the same texts with the torch backend (one run)", figure, verdict])
    agreement = bench.get("backend_agreement")
    if agreement:
        judges = agreement["judges"]
        share = lambda key: " / ".join(pct(j[key]) for j in judges.values())  # noqa: E731
        gate = agreement["gate"]
        rows.append(
            [
                f"ONNX labels against torch's, {num(min(j['prompts'] for j in judges.values()))} prompts, judges "
                + " / ".join(f"`{name.rsplit(':', 1)[-1]}`" for name in judges)
                + ": same top-1 family; occupation; task",
                f"{share('family_top1')}; {share('occupation_top1')}; {share('task_top1')}",
                f"family ≥ {pct(gate['family_top1'])}, occupation ≥ {pct(gate['occupation_top1'])}: "
                + ("met" if all(j[key] >= bar for j in judges.values() for key, bar in gate.items()) else "not met"),
            ]
        )
    probe = bench.get("quantized_probe")
    if probe:
        agree, gate = probe["prompts_agreeing"], probe["gate"]
        below = agree["vote_family"] < gate["family_top1"] or agree["vote_occupation"] < gate["occupation_top1"]
        rows.append(
            [
                f"int8 model (dynamic, per channel; bench/quantized_probe.py) against fp32, {num(probe['texts']['prompts'])} prompts and "
                f"{num(probe['texts']['task_statements'])} tasks: same nearest task; occupation and family of a 10-task vote",
                f"{pct(agree['task'])}; {pct(agree['vote_occupation'])} and {pct(agree['vote_family'])}, {probe['speedup']:.2f}× faster",
                "far below the gate: fp32 stays the default" if below else "near the gate: worth a full labeled run",
            ]
        )
    rows += [
        ["peak resident memory of one process: cold run / warm run", f"{num(bench.get('peak_rss_mb_cold'))} MB / {num(bench.get('peak_rss_mb_warm'))} MB", goal("peak_rss_mb")],
    ]
    suite = bench.get("suite", {})
    if suite:
        rows.append(["the tests: `.ci/run` on a clean clone, install and lint included (one run)", f"**{minutes(bench.get('suite_ci_s'))}**", goal("suite_ci_s")])
        not_e2e = bench.get("suite_not_e2e_measured")
        when = f" at {not_e2e['commit']} ({not_e2e['date']})" if not_e2e and not_e2e.get("commit") != suite.get("commit") else ""
        rows.append([f"the tests without the full-data run (`-m \"not e2e\"`, one run{when})", minutes(bench.get("suite_not_e2e_s")), goal("suite_not_e2e_s")])
    growth = bench.get("growth") or []
    if growth:
        sizes = " / ".join(f"{g['prompts'] // 1000}k" for g in growth)
        rows.append(
            [
                f"default judge's retrieval and selection on synthetic vectors: {sizes} prompts",
                " / ".join(f"{g['seconds']:.1f} s" for g in growth) + "; peak " + " / ".join(f"{g['peak_rss_mb']:.0f}" for g in growth) + " MB",
                "near-linear time, bounded memory",
            ]
        )
    warehouse = bench.get("warehouse_growth") or []
    if warehouse:
        largest = warehouse[-1]
        met = all(meets(largest[key]) for key, _, meets in GROWTH_BARS)
        rows.append(
            [
                f"the `warehouse` job at {num(largest['prompts'])} synthetic prompts ({num(largest['benchmarks'])} benchmarks; "
                "[docs/scaling.md](scaling.md#per-benchmark-files-partition-runs-side-by-side)): full rebuild / add one benchmark / change one",
                f"{_minutes_or_seconds(largest['full_s'])} / {_minutes_or_seconds(largest['add_one_s'])} / {_minutes_or_seconds(largest['change_one_s'])}; "
                f"peak {num(largest['peak_rss_mb'])} MB",
                "≤ 15 min / ≤ 60 s / ≤ 60 s, ≤ 4,096 MB: " + ("met" if met else "not met"),
            ]
        )
    measured = {**bench.get("measured", {}), **({"tests": suite} if suite else {}), **({"backends compared": agreement} if agreement else {}),
                **({"int8 probe": probe} if probe else {})}
    when = "; ".join(
        f"{phase} at {m.get('commit')} ({m.get('date')}{f', {cpu_of(m)}' if cpu_of(m) else ''})" for phase, m in sorted(measured.items())
    )
    return f"Medians of separate processes, from `bench/results.json` ({when}):\n\n" + _table(["", "measured", "goal"], rows)


def judges_table(run: RunOutputs) -> str:
    """Both regression ratios under each judge (analysis.judge_ratios)."""
    rows = []
    for r in run.judge_ratios.itertuples():
        rows.append(
            [
                f"`{r.labeler}`",
                f"{num(r.exposure_coverage_ratio, 2)} ({num(r.exposure_ci_low, 2)}–{num(r.exposure_ci_high, 2)})",
                f"{num(r.importance_top_bottom_ratio, 2)} ({num(r.importance_ci_low, 2)}–{num(r.importance_ci_high, 2)})",
            ]
        )
    return _table([f"judge (threshold {run.headline['coverage_threshold']:d})", "exposure ratio", "importance ratio"], rows)


def regressions_text(run: RunOutputs) -> str:
    c = run.coverage_ratio.iloc[0]
    i = run.importance_ratio.iloc[0]
    return (
        f"The exposure logit uses {num(int(c['n_obs']))} tasks in {num(int(c['n_clusters']))} clusters "
        f"({num(int(c['n_tasks_without_exposure_or_wage']))} without an exposure label or a wage bill leave). The importance logit "
        f"keeps the {num(int(i['occupations_kept']))} occupations whose tasks are neither all covered nor all uncovered "
        f"({num(int(i['n_obs']))} tasks; {num(int(i['occupations_dropped']))} perfectly predicted occupations leave the sample, "
        "their fixed effect diverging).\n"
    )


def workbank_table(run: RunOutputs) -> str:
    rows = [[r.zone, num(int(r.n_tasks)), num(int(r.n_covered)), pct(r.share_covered, 0)] for r in run.zones.itertuples()]
    green = "; ".join(f"{r.occupation_title}: \"{r.task[:70]}{'…' if len(r.task) > 70 else ''}\" ({r.hours / 1e6:,.0f} M hours, {r.n_prompts} prompts)" for r in run.green.itertuples())
    threshold = run.headline["coverage_threshold"]
    return _table(["WORKBank zone", "tasks", "covered", "share covered"], rows) + (
        f"\nThe Green Light tasks with the most US work hours and fewer than {threshold} prompts (the threshold): {green}.\n"
    )


def telework_text(run: RunOutputs) -> str:
    t = run.telework.set_index("group")
    return (
        f"{pct(t.at['teleworkable', 'share_uncovered'])} of teleworkable work time is uncovered against "
        f"{pct(t.at['not_teleworkable', 'share_uncovered'])} of the rest; {pct(t.at['unmatched', 'hours_total'] / t['hours_total'].sum())} "
        "of work hours have no Dingel–Neiman score (matched neither by O*NET-SOC code nor through the BLS SOC 2010 → 2018 crosswalk; "
        "a 2018 code fed by several 2010 codes gets their average).\n"
    )


def scores_text(run: RunOutputs) -> str:
    gaps = "; ".join(f"\"{r.label}\" on {r.benchmark} ({r.model}: weighted {r.weighted_score:.2f} vs simple {r.simple_score:.2f})" for r in run.gaps.itertuples())
    return f"The largest gaps: {gaps}.\n"


def audit_table(run: RunOutputs) -> str:
    if run.audit is None:
        return "(no user audit in this run)\n"
    def cut(text: str, width: int = 60) -> str:
        return text[:width] + ("…" if len(text) > width else "")

    rows = [
        [
            cut(r.input_task) if isinstance(r.input_task, str) else f"task_id {r.task_id}",
            f"{r.onet_soc_code} {cut(r.onet_task)}",
            r.zone if isinstance(r.zone, str) else "—",
            num(int(r.n_prompts)),
            "yes" if r.covered else "no",
        ]
        for r in run.audit.itertuples()
    ]
    return _table(["input task", "O*NET match", "zone", "prompts", "covered"], rows)


NOMINAL = intervals.BOOTSTRAP_CI_COVERAGE


def interval_text(coverage: dict) -> str:
    """What the simulation says of the bootstrap intervals (bench/interval_coverage.json)."""
    c = coverage["coverage"]
    pop = coverage["population"]
    reached = [m for m, v in c.items() if NOMINAL[0] <= v <= NOMINAL[1]]
    verdict = (
        f"the {coverage['reported']} interval reaches it, so it is reported as a 95% confidence interval"
        if coverage["reported"] in reached
        else "no bootstrap interval reaches it, so the pipeline reports the basic interval as a descriptive spread of the "
        "estimate under resampling, **not** as a confidence interval"
    )
    return (
        f"A simulation (`bench/interval_coverage.py`, {coverage['samples']} suites of {sum(pop['benchmark_sizes'])} prompts in "
        f"{len(pop['benchmark_sizes'])} benchmarks drawn from a synthetic population of {pop['tasks']:,} tasks, threshold "
        f"{pop['threshold']}, {coverage['replicates']} replicates each) measures how often each interval covers the true share "
        f"({pct(coverage['true_share'])}; the estimates average {pct(coverage['mean_estimate'])}): percentile "
        f"{pct(c['percentile'], 1)}, basic {pct(c['basic'], 1)}, BCa {pct(c['bca'], 1)}. Nominal is 95% "
        f"({pct(NOMINAL[0], 0)}–{pct(NOMINAL[1], 0)} accepted): {verdict}.\n"
    )


def settings_table(configurables: list[tuple[str, type, Callable[[str], str]]]) -> str:
    """Every field of the configurable resources, given as (resource key, class, the environment
    variable of a field): its variable, default and meaning. A class's `VARIABLE_NOTES` say how a
    field not read by its own variable is set."""

    def shown(value) -> str:
        if isinstance(value, list):
            return "`" + ",".join(str(v) for v in value) + "`"
        return "" if value in ("", None) else f"`{value}`"

    rows = []
    for key, resource, variable_of in configurables:
        notes = getattr(resource, "VARIABLE_NOTES", {})
        for name, field in resource.model_fields.items():
            if name in notes:
                rows.append([f"`{key}.{name}`", notes[name], "", str(field.description)])
            else:
                rows.append([f"`{key}.{name}`", f"`{variable_of(name)}`", shown(field.default), str(field.description)])
    return _table(["setting", "environment variable", "default", "meaning"], [[cell.replace("|", "\\|") for cell in row] for row in rows])


def warm_comparison_text(comparison: dict) -> str:
    """bench/warm_comparison.json (bench/compare_warm.py) as one sentence."""
    this, other = comparison["this"], comparison["other"]
    runs = comparison["runs"]
    text = (
        f"Warm runs alternated on {comparison['date']}, medians of {len(runs['this'])}: "
        f"{_timed(comparison, 'this', this)} against {_timed(comparison, other, other)}.\n"
    )
    differences = comparison.get("largest_step_differences")  # recorded since stop 53
    if differences:
        text += f"\nThe steps whose medians differ most ({this} against {other}):\n\n" + _table(
            ["step", this, other, "difference"],
            [[row["step"], f"{row['this']:.2f} s", f"{row[other]:.2f} s", f"{row['difference_s']:+.2f} s"] for row in differences],
        )
    return text


def _timed(figures: dict, name: str, label: str) -> str:
    """One side of an alternated bench (its `median_s` and `runs` under `name`): `label 12.3 s (12.1, 12.3, 12.9)`."""
    return f"{label} {figures['median_s'][name]:.1f} s ({', '.join(f'{x:.1f}' for x in figures['runs'][name])})"


def postgres_overhead_text(overhead: dict) -> str:
    """bench/postgres_overhead.json (bench/postgres_overhead.py) as one sentence."""
    ratio = overhead["postgres_over_sqlite"]
    return (
        f"Warm runs at {overhead['commit']} on {overhead['date']} ({overhead['machine'].get('cpu', '?')}, "
        f"{overhead['machine'].get('cores', '?')} cores), alternated, medians of {len(overhead['runs']['sqlite'])}: "
        f"{_timed(overhead, 'postgres', 'PostgreSQL')} against {_timed(overhead, 'sqlite', 'SQLite')}, "
        f"×{ratio:.2f} ({'+' if ratio >= 1 else '−'}{abs(ratio - 1) * 100:.0f}%).\n"
    )


def partition_throughput_text(figures: dict) -> str:
    """bench/partition_throughput.json (bench/partition_throughput.py): the throughput ratio of 2
    partition workers over 1, the warehouse job after a change, and the projection."""
    runs = figures["runs"]
    most = {w: ", ".join(str(r["most_steps_at_once"]) for r in runs[w]) for w in runs}
    n = len(runs["1"])
    seconds = {w: [r["seconds"] for r in runs[w]] for w in runs}
    timed = {"median_s": figures["median_s"], "runs": seconds}
    p = figures["projection"]
    return (
        f"At {figures['commit']} on {figures['date']} ({figures['machine'].get('cpu', '?')}, {figures['machine'].get('cores', '?')} cores): "
        f"{len(figures['benchmarks'])} benchmarks ({num(runs['1'][0]['prompts'])} prompts), one `benchmark_partitions` run each, "
        f"launched at once and labeled from scratch (warm embedding cache), alternated, medians of {n}: "
        f"{_timed(timed, '1', '1 worker')} against {_timed(timed, '2', '2 workers')}, "
        f"**×{figures['two_over_one_throughput']:.2f} the throughput** "
        f"(partition steps running at once, per repetition: {most['1']} with one slot, {most['2']} with two). "
        f"The `warehouse` job after one benchmark changed, on the full run ({num(figures['warehouse_prompts'])} prompts): "
        f"{figures['warehouse_job_median_s']:.1f} s ({', '.join(f'{x:.1f}' for x in figures['warehouse_job_s'])}).\n\n"
        f"Projected linearly to {num(p['benchmarks'])} benchmarks and {num(p['prompts'])} prompts (three orders of magnitude "
        f"past what was measured: an order of size, not a forecast): embedding at least {p['embedding_hours_at_least']:.0f} h "
        f"on this machine (cold, {num(figures['embedding_from']['texts'])} texts in {figures['embedding_from']['seconds']:.0f} s, "
        f"bench/results.json); labeling {p['labeling_hours_1_worker']:.1f} h with 1 worker, "
        f"{p['labeling_hours_2_workers']:.1f} h with 2; partition files {p['partition_files_gb']:.1f} GB. The `warehouse` job is "
        "measured, not projected, below.\n"
    )


def _names(names: list[str], most: int = 4) -> str:
    """Asset names, short: partitions gathered under their asset, a schema with more than `most`
    assets counted (`12 marts/*`)."""
    by_asset: dict[str, list[str]] = {}
    for name in names:
        asset, _, partition = name.partition("[")
        by_asset.setdefault(asset, []).append(partition.rstrip("]"))
    by_schema: dict[str, list[str]] = {}
    for asset, partitions in sorted(by_asset.items()):
        shown = f"{asset}[{', '.join(p for p in partitions if p)}]" if any(partitions) else asset
        by_schema.setdefault(asset.split("/")[0], []).append(f"`{shown}`")
    return ", ".join(", ".join(shown) if len(shown) <= most else f"{len(shown)} `{schema}/*`" for schema, shown in by_schema.items()) or "none"


def _causes(case: dict) -> str:
    """Dagster's root causes of a case's stale-but-kept names, each reason once with the assets it names."""
    found: dict[str, list[str]] = {}
    for causes in case["causes"].values():
        for cause in causes:
            found.setdefault(f"{cause['category'].lower()}: {cause['reason']}", []).append(cause["asset"])
    return "; ".join(f"{_names(sorted(set(assets)))} {reason.split(': ', 1)[1]} ({reason.split(':')[0]})" for reason, assets in sorted(found.items()))


def staleness_agreement_text(figures: dict) -> str:
    """bench/staleness_agreement.json (bench/staleness_agreement.py): per change kind, the cached
    steps Dagster called stale before `make run` against those that then worked."""
    rows = []
    for case in figures["cases"]:
        rows.append([
            case["change"],
            _names(case["stale_cached"]),
            num(len(case["worked"])),
            "**yes**" if case["agree"] else "no",
            _names(case["stale_but_kept"]),
            _names(case["worked_but_not_stale"]),
            f"{num(len(case['worked_but_not_stale_or_downstream']))} / {num(len(case['stale_and_downstream_but_kept']))}",
        ])
    causes = [f"- {case['case']}: {_causes(case)}" for case in figures["cases"] if case["causes"]]
    agreeing = [case["case"] for case in figures["cases"] if case["agree"]]
    asked = [case["ask_s"] for case in figures["cases"]]
    return (
        f"At {figures['commit']} on {figures['date']}, from a small run ({', '.join(figures['benchmarks'])}), one change after the other; "
        "before each run the `files/*` assets observed and Dagster asked, then `make run`'s command run. Counted over the cached "
        "steps (an asset or asset[partition] that records `recomputed`):\n\n"
        + _table(["change", "stale per Dagster", "worked (count)", "agree", "stale but kept", "worked but not stale",
                  "with all downstream of the stale: worked but not named / named but kept"], rows)
        + f"\nThey agree exactly for: {', '.join(agreeing) or 'no change kind'}. Observing and asking took {min(asked):.0f}–{max(asked):.0f} s "
        "a case (two processes that load the code location). Dagster's root causes of what it called stale and the step kept:\n\n"
        + ("\n".join(causes) + "\n" if causes else "none\n")
    )


# The bars of issue #42 at a million prompts, judged from bench/results.json's `warehouse_growth`.
GROWTH_BARS = (
    ("add_one_s", "add one benchmark ≤ 60 s", lambda v: v <= 60),
    ("change_one_s", "change one ≤ 60 s", lambda v: v <= 60),
    ("full_s", "full rebuild ≤ 15 min", lambda v: v <= 900),
    ("peak_rss_mb", "peak RSS ≤ 4,096 MB", lambda v: v <= 4096),
)
GROWTH_PHASES = (("dbt", "dbt"), ("analysis", "analysis"), ("report", "report"), ("catalogs", "catalogs and judge validation"))


def _minutes_or_seconds(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _growth_figure(entry: dict, key: str) -> str:
    runs = entry["runs"][key.removesuffix("_s")]
    seconds = ", ".join(f"{r['seconds']:.0f}" for r in runs)
    spread = f" ({seconds})" if len(runs) > 1 else ""
    return f"{_minutes_or_seconds(entry[key])}{spread}"


def warehouse_growth_text(bench: dict) -> str:
    """bench/results.json's `warehouse_growth` (bench/warehouse_growth.py): the warehouse job at each
    size, the bars at a million prompts, and where a refresh's time goes."""
    growth = bench["warehouse_growth"]
    stamp = bench.get("measured", {}).get("warehouse_growth", {})
    rows = [
        [num(g["prompts"]), num(g["benchmarks"]), _growth_figure(g, "full_s"), _growth_figure(g, "add_one_s"), _growth_figure(g, "change_one_s"),
         _growth_figure(g, "remove_one_s"), f"{num(g['peak_rss_mb'])} MB", f"{num(g['warehouse_mb'])} MB"]
        for g in growth
    ]
    loads = [r["load_average"][0] for g in growth for runs in g["runs"].values() for r in runs]
    text = (
        f"At {stamp.get('commit', '?')} on {stamp.get('date', '?')} ({cpu_of(stamp) or '?'}, {(stamp.get('machine') or {}).get('cores', '?')} cores, "
        f"shared: 1-minute load average {min(loads):.1f} to {max(loads):.1f} across the runs, each run's in bench/results.json), "
        "each figure a separate process running the `warehouse` job, the median of 3 where a run took under a minute (every run in brackets):\n\n"
        + _table(["prompts", "benchmarks", "full rebuild", "add one (1,000 prompts)", "change one", "remove one", "peak RSS", "warehouse file"], rows)
    )
    largest = growth[-1]
    verdicts = []
    for key, label, meets in GROWTH_BARS:
        verdicts.append(f"{label}: {'met' if meets(largest[key]) else 'not met'} ({_minutes_or_seconds(largest[key]) if key != 'peak_rss_mb' else num(largest[key]) + ' MB'})")
    below = [g for g in growth if g["prompts"] * 10 == largest["prompts"]]
    if below:
        ratio = largest["add_one_s"] / below[0]["add_one_s"]
        verdicts.append(f"adding one grows ×{ratio:.2f} from {num(below[0]['prompts'])} to {num(largest['prompts'])} prompts (< 3: {'met' if ratio < 3 else 'not met'})")
    text += f"\nThe bars at {num(largest['prompts'])} prompts: " + "; ".join(verdicts) + ".\n"
    parts = []
    for figure, label in (("add_one", "adding one"), ("full", "the full rebuild")):
        phases = largest["phases"][figure]
        run = next(r for r in largest["runs"][figure] if r["phases"] == phases)
        named = ", ".join(f"{name} {phases[key]:.0f} s" for key, name in GROWTH_PHASES)
        slowest = ", ".join(f"`{step}` {seconds:.0f} s" for step, seconds in sorted(run["steps"].items(), key=lambda item: -item[1])[:3])
        outside = run["seconds"] - sum(run["steps"].values())
        parts.append(
            f"{label} ({run['seconds']:.0f} s): {named}, the other steps {phases['other_steps']:.0f} s, and outside the steps "
            f"(process start-up, definitions, Dagster's events) {outside:.0f} s; its slowest steps {slowest}"
        )
    text += f"\nWhere the time goes at {num(largest['prompts'])} prompts (the median run's steps): " + "; ".join(parts) + ".\n"
    written = ", ".join(f"{num(g['prompts'])} in {g['corpus_written_s']:.0f} s" for g in growth)
    text += f"\nThe synthetic corpus was written ({written}) before each size's runs, and is not in their times.\n"
    return text


JUDGE_VARIANT_FIGURES = (
    ("theagentcompany_family_top1", "TheAgentCompany family top-1"),
    ("gdpval_family_top1", "GDPval family top-1"),
    ("gdpval_occupation_top1", "GDPval occupation top-1"),
    ("reference_occupation_precision", "reference occupation precision"),
    ("reference_family_precision", "reference family precision"),
    ("reference_task_precision", "reference task precision"),
    ("reference_occupation_recall", "reference occupation recall"),
    ("reference_family_recall", "reference family recall"),
    ("reference_task_recall", "reference task recall"),
    ("intent_top1_plausible", "benchmark intent, top-1 plausible"),
    ("intent_any_plausible", "benchmark intent, any plausible"),
    ("intent_primary_covered", "benchmark intent, primary occupation covered"),
)


def landing_table(run: RunOutputs) -> str:
    """Where each benchmark lands (report/landing.py): its labeled prompts' top occupations and
    families, its abstentions, and the benchmark-intent yardstick where it has one."""
    rows = landing_rows(run.landing, run.benchmark_index, run.validation_frame, run.headline["labeler"])
    body = []
    for r in rows.itertuples(index=False):
        intent = "—" if math.isnan(r.top1_plausible) else (
            f"{num(r.top1_plausible, 2)} / {num(r.any_plausible, 2)} / {'yes' if r.primary_covered else 'no'} ({r.intent_half})"
        )
        body.append([r.benchmark, f"{num(r.n_prompts_labeled, 0)} of {num(r.n_prompts, 0)}", pct(r.abstained_share, 0),
                     shares_text(r.top_occupations, shorten=40), shares_text(r.top_families), intent])
    header = ["benchmark", "labeled prompts", "abstained", "top occupations (share of labeled prompts, by rank-1 label)", "top families",
              "intent: top-1 / any plausible / primary covered"]
    with_intent = int(rows["top1_plausible"].notna().sum()) if len(rows) else 0
    return (
        f"Labeler `{run.headline['labeler']}`. *Abstained*: of the prompts the judge read. *Intent*: the benchmark-intent "
        f"yardstick (the occupations where the benchmark's stated work plausibly belongs; kept outside the repository, here for "
        f"{with_intent} benchmarks), with the half of its split the benchmark is in.\n\n" + _table(header, body)
    )


def judge_variants_text(variants: dict) -> str:
    """bench/judge_variants.json (bench/judge_variants.py): each variant of judge v4 (v5 and v6 among them)
    on the `tune` halves (where one chooses), then its paired change against v4 on the `holdout`
    halves, the candidates' recall on each, and the stability of the labels of each judge measured."""
    names = list(variants["variants"])
    tune_rows, holdout_rows = [], []
    against = variants.get("against", "v4")
    for key, label in JUDGE_VARIANT_FIGURES:
        if f"tune:{key}" not in variants["variants"][names[0]]["figures"]:
            continue  # a figure measured since this file was written
        tune_rows.append([label, *(num(variants["variants"][n]["figures"][f"tune:{key}"], 3) for n in names)])
        cells = [label]
        for n in names:
            value = variants["variants"][n]["figures"][f"holdout:{key}"]
            change = variants["variants"][n].get("change_against", variants["variants"][n].get("change_against_v4", {})).get(f"holdout:{key}")
            cells.append(num(value, 3) + (f" ({change[0]:+.3f}; {change[1]:+.3f} to {change[2]:+.3f})" if change else ""))
        holdout_rows.append(cells)
    for half, rows in (("tune", tune_rows), ("holdout", holdout_rows)):
        for level in ("task", "occupation"):
            rows.append([f"reference candidate recall, {level}", *(num(variants["variants"][n]["candidate_recall"][half][level], 3) for n in names)])
    tune_rows.append(["labels per labeled prompt (these benchmarks)", *(num(variants["variants"][n]["figures"]["labels_per_labeled_prompt"], 2) for n in names)])
    if "occupations_with_covered_task" in variants["variants"][names[0]]["figures"]:
        tune_rows.append(
            ["occupations with a covered task (all benchmarks)", *(num(variants["variants"][n]["figures"]["occupations_with_covered_task"], 0) for n in names)]
        )
    header = ["", *(f"`{n}`" for n in names)]
    text = (
        f"Measured at {variants['commit']} ({variants['date']}) on {num(variants['prompts'])} prompts of {len(variants['benchmarks'])} "
        "benchmarks. `tune` halves, where a variant is chosen:\n\n"
        + _table(header, tune_rows)
        + f"\n`holdout` halves, for reporting only: each figure, then its paired change against `{against}` on the same prompts and a 95% interval:\n\n"
        + _table(header, holdout_rows)
    )
    measured = [(name.removeprefix("stability_"), value) for name, value in variants.items() if name.startswith("stability_")]
    if measured:
        text += "\nStability: when the last eleventh of each benchmark's prompts is added, the label sets of\n\n"
        for name, stability in measured:
            worst = max(stability["per_benchmark"].items(), key=lambda item: item[1])
            text += (
                f"- `{name}`: {pct(stability['share_changed_all'])} of the {num(stability['prompts_compared'])} prompts labeled before change "
                f"(most in {worst[0]}: {pct(worst[1])});\n"
            )
    return text


def sections(
    run: RunOutputs,
    bench: dict | None,
    coverage: dict | None = None,
    comparison: dict | None = None,
    variants: dict | None = None,
    postgres: dict | None = None,
    throughput: dict | None = None,
    band_coverage: dict | None = None,
    staleness: dict | None = None,
    *,
    configurables: list[tuple[str, type, Callable[[str], str]]],
) -> dict[str, str]:
    """Every generated block; `configurables` are the resources of the settings table (`configurables()`)."""
    out: dict[str, Callable[[], str]] = {
        "settings": lambda: settings_table(configurables),
        "headline": lambda: headline_table(run),
        "landing": lambda: landing_table(run),
        "validation": lambda: validation_table(run),
        "analysis": lambda: analysis_table(run),
        "limitations": lambda: limitations_text(run),
        "ratio_thresholds": lambda: ratio_thresholds_table(run),
        "sensitivity": lambda: sensitivity_table(run),
        "judges": lambda: judges_table(run),
        "regressions": lambda: regressions_text(run),
        "workbank": lambda: workbank_table(run),
        "telework": lambda: telework_text(run),
        "scores": lambda: scores_text(run),
        "audit": lambda: audit_table(run),
    }
    rendered = {name: make() for name, make in out.items()}
    if bench is not None:
        rendered["speed"] = speed_table(bench)
    if coverage is not None:
        rendered["interval"] = interval_text(coverage)
    if comparison is not None:
        rendered["warm_comparison"] = warm_comparison_text(comparison)
    if variants is not None:
        rendered["judge_variants"] = judge_variants_text(variants)
    if postgres is not None:
        rendered["postgres_overhead"] = postgres_overhead_text(postgres)
    if throughput is not None:
        rendered["partition_throughput"] = partition_throughput_text(throughput)
    if band_coverage is not None:
        rendered["label_band"] = band_text(run, band_coverage)
    if staleness is not None:
        rendered["staleness_agreement"] = staleness_agreement_text(staleness)
    if bench is not None and bench.get("warehouse_growth"):
        rendered["warehouse_growth"] = warehouse_growth_text(bench)
    return rendered


_HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
_LINK = re.compile(r"\]\(#([^)]+)\)")
_SEE = re.compile(r"\(([A-Za-z][\w -]*?)\s+(above|below)[;,)]")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def cross_reference_problems(text: str) -> list[str]:
    """Every cross-reference of a page that points the wrong way: a link to a section of the page
    (`[..](#anchor)`) that comes after it unless its line says "below", and a "(<section> above)" or
    "(<section> below)" whose section is not on that side. A section is named by the first words of
    its heading; a phrase naming no heading (table rows "above") is not a cross-reference."""
    headings = [(m.start(), m.group(2)) for m in _HEADING.finditer(text)]
    anchors = {slug(title): start for start, title in headings}
    problems = []
    for match in _LINK.finditer(text):
        target = anchors.get(match.group(1))
        line = text[text.rfind("\n", 0, match.start()) + 1 : text.find("\n", match.end())]
        if target is None:
            problems.append(f"link to #{match.group(1)}: no such section")
        elif target > match.start() and "below" not in line:
            problems.append(f"link to #{match.group(1)} points to a later section without saying 'below': {line.strip()}")
    for match in _SEE.finditer(text):
        name, side = match.group(1).strip().lower(), match.group(2)
        named = [start for start, title in headings if title.lower().startswith(name)]
        if not named:
            continue
        before = any(start < match.start() for start in named)
        after = any(start > match.start() for start in named)
        if (side == "above" and not before) or (side == "below" and not after):
            problems.append(f"'({match.group(1)} {side})' but the section '{name}' is {'after' if side == 'above' else 'before'} it")
    return problems


def documents(root: Path) -> list[Path]:
    """The pages that may hold generated blocks: the README, then docs/*.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def held_blocks(texts: dict[str, str]) -> dict[str, str]:
    """Every generated block of the documents `texts` (name -> text), by block name; a name held
    by two documents is an error (one rendering, one place)."""
    held: dict[str, str] = {}
    where: dict[str, str] = {}
    for document, text in texts.items():
        for name, body in blocks(text).items():
            if name in held:
                raise ValueError(f"generated block {name!r} is in both {where[name]} and {document}")
            held[name], where[name] = body, document
    return held


def blocks(readme: str) -> dict[str, str]:
    """The generated blocks a README holds, by name."""
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(readme)}


def rewrite(readme: str, rendered: dict[str, str]) -> str:
    """The README with each generated block replaced by its rendering (blocks it does not hold stay)."""

    def replace(match: re.Match) -> str:
        name = match.group("name")
        body = rendered.get(name, match.group("body"))
        return f"{match.group(1)}{body}{match.group(4)}"

    return _BLOCK.sub(replace, readme)


def configurables() -> list:
    """The configurable resources, and the instance's settings (key `instance`), as the settings
    table shows them: (resource key, class, the environment variable of a field)."""
    from workbank_dagster.environment import environment_variable
    from workbank_dagster.labeling.chat_model import ChatModelResource, chat_model_variable
    from workbank_dagster.settings import CONCERNS, InstanceSettings

    return [
        *((key, concern, environment_variable) for key, concern in CONCERNS.items()),
        ("chat_model", ChatModelResource, chat_model_variable),
        ("instance", InstanceSettings, environment_variable),
    ]


def bench_figures() -> dict[str, dict | None]:
    """`sections`' measured inputs (BENCH_FILES), None where a file is missing."""
    paths = {name: REPO_ROOT / "bench" / f"{file}.json" for name, file in BENCH_FILES.items()}
    return {name: json.loads(path.read_text()) if path.is_file() else None for name, path in paths.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tools/readme.py", description="rewrite the generated tables of README.md and docs/*.md from the last run's outputs and bench/*.json"
    )
    parser.add_argument("--check", action="store_true", help="only say whether they match them (exit 1 if not)")
    args = parser.parse_args(argv)
    from workbank_dagster.settings import settings_at_load

    settings = settings_at_load().resolve()
    run = RunOutputs.read(settings.output_dir / "headline.json", settings.duckdb_path)
    rendered = sections(run, **bench_figures(), configurables=configurables())
    texts = {path: path.read_text(encoding="utf-8") for path in documents(REPO_ROOT)}
    held = held_blocks({path.relative_to(REPO_ROOT).as_posix(): text for path, text in texts.items()})
    missing = sorted(set(rendered) - set(held))
    if missing:
        print(f"no document holds the generated block(s) {', '.join(missing)}", file=sys.stderr)
        return 1
    if args.check:
        stale = sorted(name for name, body in rendered.items() if held[name] != body)
        print("README.md and docs/ match the last run" if not stale else f"stale generated tables: {', '.join(stale)}")
        return 1 if stale else 0
    for path, text in texts.items():
        updated = rewrite(text, rendered)
        if updated != text:
            path.write_text(updated, encoding="utf-8")
    print(f"{len(held)} generated tables written in README.md and docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
