"""The whole pipeline, as `make run` runs it, on the real data (once per session), then warm.

Every test that reads that run lives in this file (conftest refuses one elsewhere): the suite's
workers take whole files (`--dist loadfile`), so one worker makes the run, once, and the warm run
at the end of the file never rewrites the outputs under another worker's test."""

from __future__ import annotations

import math
import time
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest
from browser import chromium, console_errors, missing, wait_for
from conftest import ARTIFACTS, run_pipeline


def test_headline_numbers(pipeline_run):
    h = pipeline_run["headline"]
    assert h["n_tasks"] == 18_796
    assert h["n_occupations"] == 923
    assert h["n_families"] == 22
    assert h["n_benchmarks"] == 24
    assert h["n_prompts"] == 7_702
    assert h["total_employment"] == 152_091_610
    assert h["coverage_threshold"] == 5
    assert h["labeler"] == "embedded:all-MiniLM-L6-v2:v7"
    # Judge v6 labels sparingly: one to three tasks a labeled prompt.
    assert h["n_prompts_labeled"] <= h["n_labels"] <= 3 * h["n_prompts_labeled"]
    assert 0 < h["n_tasks_covered"] < h["n_tasks"]
    assert 0.0 < h["work_time_share_uncovered"] < 1.0
    # About 440 WritingBench prompts are Chinese: marked unlabeled with the reason, and counted.
    assert 400 <= h["n_prompts_unlabeled_language"] <= 460
    expected_keys = {
        "n_tasks", "n_occupations", "n_families", "n_benchmarks", "n_prompts", "n_labels", "coverage_threshold",
        "n_tasks_covered", "n_occupations_with_covered_task", "n_families_without_covered_occupation",
        "work_time_share_uncovered", "total_employment", "labeler", "n_prompts_abstained",
        "holdout_gdpval_family_top1", "holdout_gdpval_occupation_top1", "holdout_gdpval_occupation_precision",
        "holdout_gdpval_labels_per_labeled_prompt", "holdout_theagentcompany_family_top1",
        "labels_per_labeled_prompt", "work_time_share_uncovered_label_band_low", "work_time_share_uncovered_label_band_high",
        "exposure_coverage_ratio_simple", "importance_top_bottom_ratio_simple", "importance_logit_occupations_kept",
    }
    assert expected_keys <= set(h)
    assert h["labels_per_labeled_prompt"] == round(h["n_labels"] / h["n_prompts_labeled"], 3)


def test_the_run_is_stamped_with_version_commit_labeler_and_data_snapshot(pipeline_run):
    """headline.json's `version` and the report's footer: the package version, this checkout's commit,
    the labeler, and the data snapshot over every input file the warehouse records (#39). The run
    reads the pinned sources as `make run` does: the committed benchmarks from the repository, the
    rest from the shared folder by SHA-256, so nothing was downloaded."""
    from workbank_dagster.report.headline import data_snapshot, git_commit, package_version
    from workbank_dagster.settings import REPO_ROOT

    stamp = pipeline_run["headline"]["version"]
    assert stamp["package_version"] == package_version() and stamp["labeler"] == pipeline_run["headline"]["labeler"]
    found = git_commit(REPO_ROOT)
    assert (stamp.get("commit"), stamp.get("commit_dirty")) == (found or (None, None))
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        assert (stamp["data_snapshot"], stamp["data_files"]) == data_snapshot(con)
        files = dict(con.execute("select file, sha256 from marts.dim_source_file").fetchall())
    finally:
        con.close()
    assert stamp["data_files"] == len(files) > 40 and "benchmarks/gdpval.jsonl" in files and "results/cybench.csv" in files
    assert not (pipeline_run["root"] / "data" / "downloads").exists()
    footer = (pipeline_run["root"] / "data" / "outputs" / "report" / "index.html").read_text().rsplit("<footer", 1)[1]
    assert f"data snapshot sha256:{stamp['data_snapshot'][:16]}" in footer and f"labeler {stamp['labeler']}" in footer
    assert (f"commit {stamp['commit'][:12]}" in footer) == ("commit" in stamp)


def test_the_run_calls_no_interval_a_ci_that_is_not_one(pipeline_run):
    """The page and headline.json of the full run: "CI" only beside a Wilson or cluster-robust Wald
    interval; the uncovered work-time share's bootstrap interval is a spread (tests/report/test_interval_names.py)."""
    from interval_names import page_text, unqualified_ci_keys, unqualified_claims

    h = pipeline_run["headline"]
    assert unqualified_ci_keys(h, h["intervals"]) == []
    assert 0 < h["work_time_share_uncovered_spread_low"] < h["work_time_share_uncovered_spread_high"] <= 1.01
    assert "work_time_share_uncovered_ci_low" not in h and h["intervals"]["work_time_share_uncovered"]["kind"] == "spread"
    html = (pipeline_run["root"] / "data" / "outputs" / "report" / "index.html").read_text()
    text = page_text(html)
    assert unqualified_claims(text) == []
    assert "resampling spread" in text and "cluster-robust Wald" in text and "Wilson" in text


def test_analysis_tables_and_headline_keys(pipeline_run):
    h = pipeline_run["headline"]
    # The ratios' intervals are the delta method on the log ratio: symmetric around log r, and not empty.
    for prefix in ("exposure_coverage_ratio", "importance_top_bottom_ratio"):
        check_log_symmetric(h[prefix], h[f"{prefix}_ci_low"], h[f"{prefix}_ci_high"])
    with pytest.raises(AssertionError):  # the check can fail: an interval shifted on the ratio scale is not one of these
        check_log_symmetric(h["exposure_coverage_ratio"], h["exposure_coverage_ratio_ci_low"] + 0.1, h["exposure_coverage_ratio_ci_high"] + 0.1)
    assert h["importance_logit_occupations_dropped"] > 0
    assert 0 <= h["labeler_family_accuracy"] <= 1 and 0 <= h["labeler_occupation_accuracy"] <= 1
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables where table_schema = 'analysis'").fetchall()}
        assert {
            "coverage_logit_coefs", "coverage_logit_curve", "importance_logit", "coverage_sensitivity", "occupation_model_scores",
            "workbank_task_zones", "unbenchmarked_green_light", "workbank_agency_table", "coverage_by_zone", "uncovered_by_telework",
            "judge_ratios", "benchmark_contribution", "coverage_history", "ratios_by_threshold", "work_time_uncovered_band", "label_calibration",
            "abstention_by_benchmark",
        } <= tables
        # Both ratios, simple and adjusted, at every threshold; the adjusted importance ratio's occupations add up.
        ratios = con.execute("select * from analysis.ratios_by_threshold").df()
        assert sorted(set(ratios["threshold"])) == [1, 3, 5, 10] and len(ratios) == 16
        imp = ratios[(ratios["ratio"] == "importance") & (ratios["kind"] == "adjusted") & (ratios["threshold"] == 5)].iloc[0]
        assert imp["n_occupations"] == h["importance_logit_occupations_kept"]
        assert imp["occupations_all_covered"] + imp["occupations_none_covered"] == h["importance_logit_occupations_dropped"]
        assert imp["n_occupations"] + h["importance_logit_occupations_dropped"] + imp["occupations_without_ratings"] == h["n_occupations"]
        # The calibration is fitted on labels_dev's tune half only.
        calibration = con.execute("select yardstick, subset, fitted_on, fitted from analysis.label_calibration").fetchall()
        assert {(y, s) for y, s, on, _ in calibration if on} == {("labels_dev", "tune")} and all(fitted for *_, fitted in calibration)
        # Both embedded judges, side by side: their coverage in the sensitivity table, their ratios.
        judges = {r[0] for r in con.execute("select labeler from analysis.coverage_sensitivity where variant = 'judge'").fetchall()}
        assert judges == {"embedded:all-MiniLM-L6-v2:v3", "embedded:all-MiniLM-L6-v2:v7"}
        assert con.execute("select count(*) from analysis.judge_ratios where exposure_coverage_ratio > 0").fetchone()[0] == 2
        variants = {r[0] for r in con.execute("select variant from analysis.coverage_sensitivity").fetchall()}
        assert {"threshold", "judge", "duplicate_texts_once"} <= variants and sum(v.startswith("without:") for v in variants) == 24
        assert con.execute("select count(*) from analysis.workbank_task_zones").fetchone()[0] == 846
    finally:
        con.close()


def test_every_probability_bound_of_the_run_lies_in_zero_one(pipeline_run):
    """Every interval on a probability the run reports, built on the logit scale and transformed back
    (or Wilson's, or the band's quantiles of shares), lies in [0, 1] and brackets its estimate: the
    coverage curve (it had 7 of 100 lower bounds below 0 with p ± 1.96·se(p)), the adjusted
    probabilities by importance quintile, the judges' validation shares and the label-uncertainty band.
    (The resampling spread of the uncovered share is a basic bootstrap on the share's own scale; see
    test_work_time_interval_is_the_basic_bootstrap.)"""
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        frames = {
            "curve": con.execute("select p, ci_low, ci_high from analysis.coverage_logit_curve").df(),
            "importance": con.execute("select p, ci_low, ci_high from analysis.importance_logit").df(),
            "validation": con.execute(
                "select value as p, ci_low, ci_high from marts.fct_judge_validation where ci_low is not null and metric <> 'labels_per_labeled_prompt'"
            ).df(),
            "band": con.execute("select share_uncovered as p, band_low as ci_low, band_high as ci_high from analysis.work_time_uncovered_band").df(),
        }
    finally:
        con.close()
    assert len(frames["curve"]) == 100 and len(frames["validation"]) > 10
    for name, frame in frames.items():
        assert ((frame["ci_low"] >= 0) & (frame["ci_high"] <= 1) & (frame["ci_low"] <= frame["ci_high"])).all(), name
        if name != "band":  # the band's quantiles need not hold the estimate (the report says where it lies)
            assert ((frame["ci_low"] <= frame["p"]) & (frame["p"] <= frame["ci_high"])).all(), name


def check_log_symmetric(estimate: float, low: float, high: float) -> None:
    assert 0 < low < estimate < high
    assert math.log(high) - math.log(estimate) == pytest.approx(math.log(estimate) - math.log(low), rel=1e-9)


def check_basic_interval(row: dict) -> None:
    """The reported work-time interval is the basic bootstrap one: 2 x estimate minus the percentile bounds."""
    assert row["ci_low"] == pytest.approx(2 * row["share_uncovered"] - row["ci_high_percentile"], abs=1e-12)
    assert row["ci_high"] == pytest.approx(2 * row["share_uncovered"] - row["ci_low_percentile"], abs=1e-12)
    assert row["ci_low_percentile"] < row["ci_high_percentile"] and row["ci_low_bca"] <= row["ci_high_bca"]
    assert "not a confidence interval" in row["method"]


def test_work_time_interval_is_the_basic_bootstrap(pipeline_run):
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        row = con.execute("select * from analysis.work_time_uncovered_interval").df().iloc[0].to_dict()
    finally:
        con.close()
    check_basic_interval(row)
    h = pipeline_run["headline"]
    assert (h["work_time_share_uncovered_spread_low"], h["work_time_share_uncovered_spread_high"]) == (row["ci_low"], row["ci_high"])
    with pytest.raises(AssertionError):  # the check can fail: the old interval (percentile shifted by the bias) is not it
        shift = row["share_uncovered"] - row["bootstrap_mean"]
        check_basic_interval({**row, "ci_low": row["ci_low_percentile"] + shift, "ci_high": row["ci_high_percentile"] + shift})


def test_marts_shape_and_invariants(pipeline_run):
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        count = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        assert count("select count(*) from marts.dim_task") == 18_796
        assert count("select count(*) from marts.dim_occupation") == 923
        assert count("select count(*) from marts.dim_task where time_share_imputed") == 1_292
        assert count("select count(*) from marts.dim_task where exposed is null") == 45
        assert count("select count(*) from marts.dim_task where importance = 0") == 0
        assert count("select count(*) from marts.fct_task_coverage") == 18_796
        assert count("select count(*) from marts.fct_family_coverage") == 22
        assert sorted(r[0] for r in con.execute("select threshold from marts.fct_work_time_coverage").fetchall()) == [1, 3, 5, 10]
        shares = [r[0] for r in con.execute("select share_uncovered from marts.fct_work_time_coverage order by threshold").fetchall()]
        assert shares == sorted(shares)  # a higher bar leaves more work time uncovered
        assert count("select count(*) from marts.dim_occupation where employment is null") == 1  # 45-3031
        columns = {
            "dim_task": {"task_id", "onet_soc_code", "task", "task_type", "importance", "exposed", "time_share", "time_share_imputed", "family_code"},
            "dim_occupation": {"onet_soc_code", "title", "family_code", "family_title", "employment", "wage_bill"},
            "fct_prompt_task_labels": {"benchmark", "prompt_id", "task_id", "rank", "score", "labeler", "prompt_hash"},
            "fct_task_coverage": {"task_id", "n_prompts", "n_benchmarks", "covered"},
            "fct_occupation_coverage": {"onet_soc_code", "family_code", "n_tasks", "n_tasks_covered", "share_tasks_covered", "has_coverage", "employment", "hours", "hours_uncovered"},
            "fct_family_coverage": {"family_code", "family_title", "n_occupations", "n_occupations_with_coverage", "n_tasks", "n_tasks_covered", "hours", "hours_uncovered"},
            "fct_work_time_coverage": {"threshold", "hours_total", "hours_uncovered", "share_uncovered"},
        }
        for table, expected in columns.items():
            present = {r[0] for r in con.execute(f"describe marts.{table}").fetchall()}
            assert expected <= present, (table, expected - present)
    finally:
        con.close()


def test_abstention_is_counted_recorded_and_capped_per_benchmark(pipeline_run):
    h = pipeline_run["headline"]
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        rows = con.execute(
            "select benchmark, count(*) filter (where status = 'abstained'), count(*) filter (where status <> 'unlabeled'), "
            "count(*) filter (where status = 'abstained' and (reason = '' or confidence is null)), "
            "count(*) filter (where status = 'abstained' and reason like 'personal errand:%') "
            "from marts.fct_prompt_judgements where labeler = ? group by 1",
            [h["labeler"]],
        ).fetchall()
        no_confidence = con.execute(
            "select count(*) from marts.fct_prompt_judgements where labeler = ? and status <> 'unlabeled' and confidence is null", [h["labeler"]]
        ).fetchone()[0]
    finally:
        con.close()
    assert sum(r[1] for r in rows) == h["n_prompts_abstained"] > 0
    # The cap holds for the abstentions on weak evidence; a personal errand (the agent acting as a
    # customer, judge v7) abstains with that reason outside it.
    assert all(abstained - errands <= 0.2 * english for _, abstained, english, _, errands in rows), rows
    assert sum(errands for *_, errands in rows) > 0, "no personal errand: the v7 rule did not run"
    assert all(unexplained == 0 for _, _, _, unexplained, _ in rows) and no_confidence == 0


def test_readme_tables_are_this_run_s(pipeline_run, monkeypatch):
    """Every generated table of README.md and docs/*.md equals what this run's outputs render (never skipped)."""
    from workbank_dagster.settings import REPO_ROOT

    monkeypatch.syspath_prepend(str(REPO_ROOT / "tools"))
    import readme
    from readme import BENCH_FILES, bench_figures, configurables

    run = readme.RunOutputs.read(pipeline_run["root"] / "data" / "outputs" / "headline.json", pipeline_run["duckdb"])
    figures = bench_figures()
    assert all(figures[name] is not None for name in BENCH_FILES), f"bench files missing: {[n for n in BENCH_FILES if figures[n] is None]}"
    texts = {path.relative_to(REPO_ROOT).as_posix(): path.read_text(encoding="utf-8") for path in readme.documents(REPO_ROOT)}
    rendered = readme.sections(run, **figures, configurables=configurables())
    held = readme.held_blocks(texts)
    assert set(held) == set(rendered), f"blocks held {sorted(held)} vs generated {sorted(rendered)}"
    stale = {name: (held[name], body) for name, body in rendered.items() if held[name] != body}
    assert not stale, "README.md or docs/ is stale (run `.venv/bin/python tools/readme.py`): " + ", ".join(stale)


def test_the_judge_variants_bench_reproduces_the_run_s_validation(pipeline_run, monkeypatch):
    """bench/judge_variants.py labels with the pipeline's own functions: its `v7` figures, on both
    halves of the three yardsticks, are the run's (marts.fct_judge_validation), so what it measures is
    the judge the pipeline runs, instructions and personal errands included."""
    from workbank_dagster.labeling.judges import EmbeddedJudgeV7
    from workbank_dagster.labeling.validation import INTENT_LEVELS
    from workbank_dagster.settings import REPO_ROOT

    monkeypatch.syspath_prepend(str(REPO_ROOT / "bench"))
    from judge_variants import FIGURES, Bench, figures

    bench = Bench(pipeline_run["root"] / "data", Path(pipeline_run["env"]["WORKBANK_CACHE_DIR"]), REPO_ROOT / "benchmarks" / "instructions.jsonl")
    judge = EmbeddedJudgeV7()
    labels, judgements, _ = bench.label(judge, bench.embedded)
    mine = figures(bench, bench.per_prompt(labels, judgements))
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        run = {
            tuple(key): value
            for *key, value in con.execute(
                "select yardstick, subset, benchmark, level, metric, value from marts.fct_judge_validation where labeler = ?", [judge.labeler]
            ).fetchall()
        }
    finally:
        con.close()
    for half in ("tune", "holdout"):
        for name, (yardstick, benchmark, level, metric) in FIGURES.items():
            assert mine[f"{half}:{name}"] == pytest.approx(run[(yardstick, half, benchmark, level, metric)], abs=1e-4), (half, name)
        for metric in INTENT_LEVELS:
            assert mine[f"{half}:intent_{metric}"] == pytest.approx(run[("intent", half, "all", "occupation", metric)], abs=1e-4), (half, metric)


def test_the_reference_set_is_the_hash_rule_over_the_run_s_prompts(pipeline_run):
    """reference/reference_sample.jsonl is, per benchmark, the first 20 prompt ids of the run by a
    salted SHA-256 (so not chosen by content), and reference_labels.jsonl labels exactly those."""
    import json

    from workbank_dagster.labeling.yardsticks import reference_sample
    from workbank_dagster.settings import REPO_ROOT

    sample = [json.loads(line) for line in (REPO_ROOT / "reference" / "reference_sample.jsonl").read_text().splitlines()]
    labeled = [json.loads(line) for line in (REPO_ROOT / "reference" / "reference_labels.jsonl").read_text().splitlines()]
    assert [(r["benchmark"], r["prompt_id"]) for r in labeled] == [(r["benchmark"], r["prompt_id"]) for r in sample]
    committed: dict[str, set[str]] = {}
    for r in sample:
        committed.setdefault(r["benchmark"], set()).add(r["prompt_id"])
    prompts = pipeline_run["root"] / "data" / "partitions" / "benchmark_prompts"
    for benchmark, ids in committed.items():
        run_ids = pd.read_parquet(prompts / f"{benchmark}.parquet", columns=["prompt_id"])["prompt_id"].astype(str)
        assert ids == set(reference_sample(benchmark, run_ids)), benchmark
    assert len(sample) == 240 and len(committed) == 12


def test_every_dbt_check_passed(pipeline_run, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", pipeline_run["env"]["DAGSTER_HOME"])
    instance = dg.DagsterInstance.get()
    main_run = instance.get_runs(filters=dg.RunsFilter(job_name="all_assets"), limit=1)[0]
    records = instance.get_records_for_run(run_id=main_run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION).records
    evaluations = [r.event_log_entry.dagster_event.event_specific_data for r in records]
    assert len(evaluations) >= 30
    failed = [e.check_name for e in evaluations if not e.passed]
    assert failed == []


def _dbt(pipeline_run, tmp_path, *args: str):
    """dbt against the e2e run's warehouse, into a target folder of its own."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from workbank_dagster.settings import DBT_PROJECT_DIR

    env = {
        **os.environ,
        "WORKBANK_DUCKDB_PATH": str(pipeline_run["duckdb"]),
        "WORKBANK_PARTITIONS_DIR": str(Path(pipeline_run["duckdb"]).parent / "partitions"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    dbt = str(Path(sys.executable).with_name("dbt"))
    return subprocess.run(
        [dbt, *args, "--project-dir", str(DBT_PROJECT_DIR), "--profiles-dir", str(DBT_PROJECT_DIR), "--target-path", str(tmp_path / "target")],
        env=env, capture_output=True, text=True, timeout=900,
    )


def test_dbt_unit_tests_pass_and_make_run_leaves_them_out(pipeline_run, tmp_path):
    """The rules that carry the numbers (the three time-share imputation rules, the equal
    employment split, the coverage threshold) pass their dbt unit tests; `make run` excluded them."""
    import json

    from workbank_dagster.settings import PipelineSettings
    from workbank_dagster.transform.project import dbt_unit_test_args

    completed = _dbt(pipeline_run, tmp_path, *dbt_unit_test_args(PipelineSettings.from_env().resolve()))
    assert completed.returncode == 0, completed.stdout[-4000:]
    results = json.loads((tmp_path / "target" / "run_results.json").read_text())["results"]
    statuses = {r["unique_id"].rsplit(".", 1)[-1]: r["status"] for r in results}
    names = ("time_shares_follow_the_three_imputation_rules", "an_oews_code_shared_by_occupations_splits_its_employment_equally",
             "a_task_is_covered_from_the_threshold_on")
    assert statuses == dict.fromkeys(names, "pass")
    assert not any(name in pipeline_run["stdout"] + pipeline_run["stderr"] for name in names)


def test_every_column_of_every_model_is_described(pipeline_run):
    """Every column of every staging, intermediate and mart relation of the built warehouse has a
    description in the dbt project (the marts' columns are also their enforced contracts)."""
    import json

    from workbank_dagster.transform.project import ensure_manifest

    manifest = json.loads(ensure_manifest().read_text())
    described = {
        (node["config"].get("schema") or node["schema"], node["name"]): {c for c, v in node["columns"].items() if v.get("description")}
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model"
    }
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        built = con.execute(
            "select table_schema, table_name, list(column_name) from information_schema.columns "
            "where table_schema in ('staging', 'intermediate', 'marts') group by 1, 2"
        ).fetchall()
    finally:
        con.close()
    assert len(built) == len(described) >= 43
    undescribed = {f"{schema}.{table}": sorted(set(columns) - described[(schema, table)]) for schema, table, columns in built}
    assert {name: cols for name, cols in undescribed.items() if cols} == {}


# --- the full run's report and exports, in a real browser ------------------------------------------


def _outputs(pipeline_run) -> Path:
    return pipeline_run["root"] / "data" / "outputs"


def test_exports_cover_every_mart_and_analysis_table(pipeline_run):
    tables = _outputs(pipeline_run) / "tables"
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    try:
        expected = con.execute(
            "select table_schema || '.' || table_name from information_schema.tables where table_schema in ('marts', 'analysis') "
            # user audits run after the main job (their own partitions); the next run's export includes them
            "and table_name not in ('user_audit', 'user_audit_catalog') order by 1"
        ).fetchall()
        assert len(expected) >= 20
        dictionary = (tables / "DATA_DICTIONARY.md").read_text()
        for (name,) in expected:
            n_rows = con.execute(f"select count(*) from {name}").fetchone()[0]
            assert duckdb.execute(f"select count(*) from read_parquet('{tables / (name + '.parquet')}')").fetchone()[0] == n_rows, name
            # The whole file sniffed: a quoted comma late in a file (a model named 'MUSE (x, y)') misleads a sampled sniffer.
            assert duckdb.execute(f"select count(*) from read_csv('{tables / (name + '.csv')}', sample_size=-1)").fetchone()[0] == n_rows, name
            assert f"## `{name}`" in dictionary, name
    finally:
        con.close()
    # The marts' column descriptions come from the dbt docs.
    rows = pd.read_csv(tables / "data_dictionary.csv", keep_default_na=False)
    dim_task = rows[rows["table"] == "marts.dim_task"]
    described = dict(zip(dim_task["column"], dim_task["description"]))
    assert described["task_id"] and described["time_share"] and set(dim_task["documented_by"]) == {"dbt docs (manifest.json + catalog.json)"}
    analysis = rows[rows["table"].str.startswith("analysis.")]
    undocumented = analysis.loc[analysis["description"] == "", ["table", "column"]].values.tolist()
    assert len(analysis) > 50 and undocumented == []
    assert (tables / "dbt_docs.html").stat().st_size > 100_000


def test_report_files_and_attribution(pipeline_run):
    report = _outputs(pipeline_run) / "report"
    page = (report / "index.html").read_text()
    for name in ("benchmark_map", "coverage_curves", "importance_quintiles", "model_scores", "workbank_landscape", "family_work_time",
                 "coverage_history", "benchmark_contribution"):
        svg = (report / "figures" / f"{name}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg, name
    assert "Used under the CC BY 4.0 license" in page
    # Self-contained: no script, style sheet or image is fetched (plotly.js is inlined).
    assert "<script src=" not in page and "<link " not in page and "<img " not in page
    h = pipeline_run["headline"]
    assert f"{h['n_occupations_with_covered_task']:,} / 923" in page
    assert h["labeler"] in page and "labels_dev" in page
    assert "threshold" in page and "SHA-256" in page


def test_report_in_headless_chromium(pipeline_run):
    problem = missing()
    assert problem is None, problem
    index = _outputs(pipeline_run) / "report" / "index.html"
    con = duckdb.connect(str(pipeline_run["duckdb"]), read_only=True)
    family_sizes = dict(con.execute("select family_title, count(*) from marts.dim_occupation group by 1").fetchall())
    con.close()
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium() as driver:
        driver.get(index.as_uri())
        wait_for(driver, "return document.querySelectorAll('#benchmark-map g.slice').length > 0")
        tiles = driver.execute_script(
            "return document.getElementById('benchmark-map').data[0].ids.filter(function (i) { return i.indexOf('occupation:') === 0; }).length"
        )
        assert tiles == 923
        driver.execute_script("document.getElementById('map').scrollIntoView()")
        driver.save_screenshot(str(ARTIFACTS / "report_map.png"))
        # Click the largest family that is not the root: the map then shows that family's occupations.
        slices = driver.find_elements("css selector", "#benchmark-map g.slice")
        family = next(s for s in slices if s.text.split("\n")[0] in family_sizes)
        name = family.text.split("\n")[0]
        from selenium.webdriver.common.action_chains import ActionChains

        ActionChains(driver).move_to_element(family).click().perform()
        expected = family_sizes[name] + 1  # the family tile itself and one tile per occupation
        wait_for(driver, f"return document.querySelectorAll('#benchmark-map g.slice').length === {expected}")
        shown = [s.text.split("\n")[0] for s in driver.find_elements("css selector", "#benchmark-map g.slice")]
        assert name in shown
        driver.save_screenshot(str(ARTIFACTS / "report_map_expanded.png"))
        # The history: this run is the first refresh, adding every benchmark; each benchmark's contribution beside it.
        wait_for(driver, "return document.querySelector('#history #coverage-history .main-svg') !== null")
        trend = driver.execute_script("return document.getElementById('coverage-history').textContent")
        assert f"+{pipeline_run['headline']['n_benchmarks']} benchmarks" in trend, trend
        contributions = driver.find_elements("css selector", "#history #benchmark-contribution tbody tr")
        assert 1 <= len(contributions) <= pipeline_run["headline"]["n_benchmarks"]
        driver.execute_script("document.getElementById('history').scrollIntoView()")
        driver.save_screenshot(str(ARTIFACTS / "report_history.png"))
        # Where the figures stop, and the article's figures beside ours, as the reader sees them.
        limits = driver.find_elements("css selector", "#limitations ol.limits li")
        assert len(limits) >= 8 and all(item.is_displayed() for item in limits)
        text = driver.find_element("id", "limitations").text
        assert "not in English" in text and "abstention cap" in text and "imputed time shares" in text and "API key" in text
        driver.execute_script("document.getElementById('limitations').scrollIntoView()")
        driver.save_screenshot(str(ARTIFACTS / "report_limitations.png"))
        rows = driver.find_elements("css selector", "#like-for-like-table tbody tr")
        assert len(rows) == 10 and "208 of 923" in driver.find_element("id", "like-for-like-table").text
        assert len(driver.find_elements("css selector", "#ratios-by-threshold tbody tr")) == 4
        driver.execute_script("document.getElementById('like-for-like').scrollIntoView()")
        driver.save_screenshot(str(ARTIFACTS / "report_like_for_like.png"))
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(ARTIFACTS / "report.png"))
        assert console_errors(driver) == []



# --- then the same run again, warm -----------------------------------------------------------------


def test_warm_run_is_fast_and_loads_no_model(pipeline_run, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", pipeline_run["env"]["DAGSTER_HOME"])
    mart = dg.AssetKey(["marts", "fct_task_coverage"])
    cold = dg.DagsterInstance.get().get_latest_materialization_event(mart).asset_materialization.metadata
    assert cold["recomputed"].value is True and cold["inputs_sha256"].value
    # The report page and the data dictionary's dbt docs record their key where dbt and the
    # analysis steps do: in their materializations (no stamp files beside their outputs).
    drawn = {name: dg.AssetKey(["report", name]) for name in ("html_report", "data_dictionary")}
    cold_keys = {name: dg.DagsterInstance.get().get_latest_materialization_event(key).asset_materialization.metadata["inputs_sha256"].value
                 for name, key in drawn.items()}
    outputs = pipeline_run["root"] / "data" / "outputs"
    assert not (outputs / "report" / ".inputs.sha256").exists() and not (pipeline_run["root"] / "data" / "dbt_docs" / "docs.sha256").exists()
    started = time.perf_counter()
    completed = run_pipeline(pipeline_run["env"])
    elapsed = time.perf_counter() - started
    assert completed.returncode == 0, completed.stderr[-3000:]
    instance = dg.DagsterInstance.get()
    event = instance.get_latest_materialization_event(dg.AssetKey(["labeling", "embedded_labels"]))
    metadata = event.asset_materialization.metadata
    assert metadata["embedded_now"].value == 0
    assert metadata["model_loaded"].value is False
    # dbt did not run: nothing it reads changed, so the models were kept and reported again.
    warm = instance.get_latest_materialization_event(mart).asset_materialization.metadata
    assert warm["recomputed"].value is False and warm["inputs_sha256"].value == cold["inputs_sha256"].value
    assert warm["dagster/row_count"].value == cold["dagster/row_count"].value
    report = instance.get_latest_materialization_event(drawn["html_report"]).asset_materialization.metadata
    dictionary = instance.get_latest_materialization_event(drawn["data_dictionary"]).asset_materialization.metadata
    assert report["recomputed"].value is False and report["inputs_sha256"].value == cold_keys["html_report"]
    assert dictionary["recomputed"].value is False and dictionary["inputs_sha256"].value == cold_keys["data_dictionary"]
    # Generous bound for a noisy CI machine; the measured figure lives in bench/results.json.
    assert elapsed < 300, elapsed
