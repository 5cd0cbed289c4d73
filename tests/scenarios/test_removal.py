"""Sources change under a data folder that has run before: what left goes, what changed refreshes,
one bad file does not stop the others, and hostile text stays data.

Each test starts from a copy of the session's run on three small benchmarks (`small_base_run`, made
from an empty folder), changes its sources and runs `make run`'s command there, twice, with the
session's embedding cache. Every change a test makes is a separate claim with its own assertions;
the changes share runs because each run costs about a minute of CI.
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pandas as pd
import warehouse_snapshot as snap
from browser import chromium, console_errors, missing, wait_for
from conftest import copy_small_run, run_env, run_pipeline
from partition_tables import partition_tables

from workbank_dagster.settings import DBT_PROJECT_DIR, REPO_ROOT, PipelineSettings
from workbank_dagster.transform.project import build_dir_for, frozen_files_name, profiles_dir_for

HOSTILE_PROMPT = "Summarise <script>window.__pwned = 1;</script> the memo titled 'Q3'; DROP TABLE raw.benchmark_prompts; -- \"quoted\" & more"
# cybench is the one small benchmark with published results (results/cybench.csv).
SCORES = "select model, onet_soc_code, weighted_score from analysis.occupation_model_scores where benchmark = 'cybench' order by 1, 2"


def _env(root, sources, session_cache, audits=None) -> dict[str, str]:
    env = run_env(root, sources, session_cache)
    if audits is not None:
        env["WORKBANK_AUDITS_DIR"] = str(audits)
    return env


def _run(env: dict[str, str], *, ok: bool = True):
    completed = run_pipeline(env)
    assert (completed.returncode == 0) == ok, (completed.stdout[-3000:], completed.stderr[-3000:])
    return completed


def _query(root, sql: str):
    con = duckdb.connect(str(root / "data" / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _query_files(root, sql: str):
    """`sql` over the per-benchmark files (raw.benchmark_*, labeling.*), which the warehouse does not hold."""
    with partition_tables(root / "data" / "partitions") as con:
        return con.execute(sql).fetchall()


def _headline(root) -> dict:
    return json.loads((root / "data" / "outputs" / "headline.json").read_text())


# Tables whose content is the run's result (marts and analysis), compared canonically.
RESULT_SCHEMAS = ("marts", "analysis")


def _results(root) -> dict[str, str]:
    hashes = snap.warehouse_hashes(root / "data" / "warehouse.duckdb")["canonical"]
    return {name: digest for name, digest in hashes.items() if name.split(".")[0] in RESULT_SCHEMAS and name != "analysis.user_audit_catalog"}


def test_a_removed_benchmark_audit_and_results_change_leave_what_a_run_from_empty_leaves(tmp_path, source_dir, small_base_run, session_cache):
    """A benchmark, an audit and a change to a results file come and go again: the data folder then
    holds what the base run (the same sources, from an empty folder) holds, table for table."""
    audits = tmp_path / "audits"
    audits.mkdir()
    example = REPO_ROOT / "audits" / "example-org.csv"  # what the base run read (the default audits folder)
    shutil.copy(example, audits / "example-org.csv")
    shutil.copy(example, audits / "second-org.csv")
    root = tmp_path / "run"
    sources, _ = copy_small_run(small_base_run, root, session_cache)
    env = _env(root, sources, session_cache, audits)
    before = _query(root, SCORES)
    assert before, "cybench has published results: some model scores"

    # Arrive: a fourth benchmark (ten prompts of spider2-dbt), a second audit; every cybench result flipped.
    lines = (source_dir / "benchmarks" / "spider2-dbt.jsonl").read_text().splitlines(keepends=True)
    (sources / "benchmarks" / "spider2-dbt.jsonl").write_text("".join(lines[:10]))
    results = sources / "results" / "cybench.csv"
    original = results.read_bytes()  # as it is (read_text would turn its CRLF line ends into LF)
    frame = pd.read_csv(results)
    frame["score"] = 1.0 - frame["score"]
    frame.to_csv(results, index=False)
    _run(env)
    assert _headline(root)["n_benchmarks"] == 4
    assert _query_files(root, "select count(*) from labeling.embedded_labels where benchmark = 'spider2-dbt'")[0][0] > 0
    assert _query_files(root, "select count(*) from labeling.embedded_candidates where benchmark = 'spider2-dbt'")[0][0] > 0
    assert {r[0] for r in _query(root, "select distinct audit from analysis.user_audit")} == {"example-org", "second-org"}
    assert _query(root, SCORES) != before, "the changed results file reached the model scores"

    # Leave: the benchmark's file and the second audit go away; the results file is as it was.
    (sources / "benchmarks" / "spider2-dbt.jsonl").unlink()
    (audits / "second-org.csv").unlink()
    results.write_bytes(original)
    _run(env)
    # Both runs built the models in this warehouse's own dbt target folder (build_dir_for), so the
    # second found the partial parse the first wrote: dbt parsed the project in full once, not each
    # build (a copied warehouse's profile is not the one `prepare` parsed with).
    settings = PipelineSettings.of(data_dir=str(root / "data")).resolve()
    build_dir = DBT_PROJECT_DIR / build_dir_for(profiles_dir_for(settings, partitions_dir=settings.partition_files.frozen_root(frozen_files_name(settings.duckdb_path))))
    logs = sorted(build_dir.glob("dbt.log*"), key=lambda path: -int(path.suffix[1:]) if path.suffix[1:].isdigit() else 0)  # dbt.log.2, .1, then dbt.log
    lines = [line for path in logs for line in path.read_text().splitlines()]
    parses = [line for line in lines if '"Unable to do partial parsing' in line or '"Partial parsing enabled' in line or '"Nothing changed, skipping partial parsing' in line]
    assert len(parses) >= 2 and "profile has changed" not in parses[-1], parses
    after, expected = _headline(root), _headline(small_base_run)
    assert after["n_benchmarks"] == expected["n_benchmarks"] == 3
    assert after["n_prompts"] == expected["n_prompts"] == 39 + 50 + 23
    for key in ("n_labels", "n_prompts_labeled", "n_tasks_covered", "work_time_share_uncovered"):
        assert after[key] == expected[key], key
    # No file and no row of the benchmark that left, in its layers' files or the warehouse's tables.
    partitions = root / "data" / "partitions"
    assert sorted(p.relative_to(partitions).as_posix() for p in partitions.rglob("spider2-dbt*")) == []
    for schema, table in (("raw", "benchmark_prompts"), ("raw", "benchmark_results"), ("labeling", "embedded_labels"), ("labeling", "embedded_judgements")):
        assert _query_files(root, f"select count(*) from {schema}.{table} where benchmark = 'spider2-dbt'") == [(0,)], table
    for table in ("stg_benchmarks__prompts", "stg_labeling__embedded_labels", "fct_benchmark_prompts", "fct_prompt_judgements", "fct_prompt_candidates"):
        schema = "staging" if table.startswith("stg_") else "marts"
        assert _query(root, f"select count(*) from {schema}.{table} where benchmark = 'spider2-dbt'") == [(0,)], table
    assert _query(root, "select count(*) from raw.source_files where benchmark = 'spider2-dbt'") == [(0,)]
    assert _query(root, "select count(*) from raw.source_files where benchmark = 'cybench'") == [(2,)]  # its prompts and results files
    assert {r[0] for r in _query(root, "select distinct audit from analysis.user_audit")} == {"example-org"}
    assert _query(root, SCORES) == before
    differences = snap.differences(_results(root), _results(small_base_run))
    assert differences == [], differences


def test_a_bad_file_fails_alone_while_others_refresh_and_hostile_text_stays_data(tmp_path, source_dir, small_base_run, session_cache):
    """One run with a broken benchmark file, a changed one and a new one of hostile text; then the
    broken file is mended and cybench's results file removed."""
    problem = missing()
    assert problem is None, problem
    root = tmp_path / "run"
    sources, env = copy_small_run(small_base_run, root, session_cache)
    env["WORKBANK_JUDGEMENT_CACHE"] = str(tmp_path / "judgements.sqlite")
    # cybench breaks on its line 3; finance-agent changes (one prompt fewer); a benchmark of hostile
    # text arrives: markup, SQL and quotes in a prompt and a prompt id.
    path = sources / "benchmarks" / "cybench.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][: len(lines[2]) // 2] + "\n"
    path.write_text("".join(lines))
    finance = sources / "benchmarks" / "finance-agent.jsonl"
    finance.write_text("".join(finance.read_text().splitlines(keepends=True)[:-1]))
    rows = [{"benchmark": "aaa-hostile", "prompt_id": "p'1", "prompt": HOSTILE_PROMPT},
            {"benchmark": "aaa-hostile", "prompt_id": "p2", "prompt": "Reconcile the vendor's invoices \"as-is\" -- no; 'quotes' everywhere"}]
    (sources / "benchmarks" / "aaa-hostile.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    completed = _run(env, ok=False)
    output = completed.stdout + completed.stderr
    assert "cybench.jsonl:3" in output and "not valid JSON" in output  # the run ends failed, naming the file and line
    prompts = dict(_query_files(root, "select benchmark, count(*) from raw.benchmark_prompts group by 1"))
    assert prompts == {"cybench": 39, "finance-agent": 49, "paperbench": 23, "aaa-hostile": 2}  # cybench keeps its previous rows
    # finance-agent's change reached the marts and the headline; the report says which file failed and why.
    labeled = dict(_query(root, "select benchmark, count(distinct prompt_id) from marts.fct_prompt_task_labels group by 1"))
    assert labeled["finance-agent"] <= 49 and labeled["cybench"] >= 1
    headline = _headline(root)
    assert headline["n_prompts"] == 39 + 49 + 23 + 2
    assert "cybench.jsonl:3" in headline["benchmark_files_rejected"]["cybench"]
    page = (root / "data" / "outputs" / "report" / "index.html").read_text()
    assert "benchmark file(s) rejected" in page and "cybench.jsonl:3" in page
    # The hostile prompt went through sources, labels and dbt as data: stored as written, nothing dropped.
    stored = _query(root, "select prompt from staging.stg_benchmarks__prompts where benchmark = 'aaa-hostile' and prompt_id = 'p''1'")
    assert stored == [(HOSTILE_PROMPT,)]

    # Mended, and cybench's results file removed: the run succeeds, says nothing is rejected, and
    # cybench's model scores are gone with its results.
    assert _query(root, SCORES), "cybench has published results: some model scores"
    path.write_text((source_dir / "benchmarks" / "cybench.jsonl").read_text())
    (sources / "results" / "cybench.csv").unlink()
    _run(env)
    assert _headline(root)["benchmark_files_rejected"] == {}
    assert _query(root, SCORES) == []
    assert _query_files(root, "select count(*) from raw.benchmark_results where benchmark = 'cybench'") == [(0,)]
    # In the browser the hostile prompt is text: its script never ran, the page logged no error.
    index = root / "data" / "outputs" / "report" / "index.html"
    with chromium() as driver:
        driver.get(index.as_uri())
        wait_for(driver, "return document.getElementById('benchmark-index') !== null")
        assert driver.execute_script("return window.__pwned === undefined")
        cells = [c.text for c in driver.find_elements("css selector", "#benchmark-index td.prompt")]
        assert any("<script>window.__pwned = 1;</script>" in text and "'Q3'; DROP TABLE" in text for text in cells), cells
        # The history section: the trend over the three refreshes names the benchmark the first of these runs added.
        wait_for(driver, "return document.querySelector('#history #coverage-history .main-svg') !== null")
        trend = driver.execute_script("return document.getElementById('coverage-history').textContent")
        assert "+aaa-hostile" in trend and "~finance-agent" in trend, trend
        assert driver.find_elements("css selector", "#history #benchmark-contribution td")
        assert console_errors(driver) == []
    # The coverage history: the base run, then these two runs; the first added aaa-hostile and
    # changed finance-agent (cybench's rejected file kept its rows), the second changed nothing.
    history = _query(root, "select benchmarks_added, benchmarks_changed, benchmarks_removed, n_prompts from analysis.coverage_history order by refresh")
    assert history == [("cybench, finance-agent, paperbench", None, None, 39 + 50 + 23), ("aaa-hostile", "finance-agent", None, 39 + 49 + 23 + 2)] + [
        (None, None, None, 39 + 49 + 23 + 2)
    ], history
