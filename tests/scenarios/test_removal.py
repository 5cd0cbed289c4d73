"""Data leaves when its source leaves, and one bad file does not stop the others' refresh.

Each test starts from a copy of the session's run on three small benchmarks (`small_base_run`: CI's
time), changes its sources and runs `make run`'s command again there, with the session's
embedding cache. A run compared against is made from an empty folder.
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest
import warehouse_snapshot as snap
from conftest import copy_small_run, run_env, run_pipeline

from workbank_dagster.settings import REPO_ROOT


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


def _headline(root) -> dict:
    return json.loads((root / "data" / "outputs" / "headline.json").read_text())


# Tables whose content is the run's result (marts and analysis), compared canonically.
RESULT_SCHEMAS = ("marts", "analysis")


def _results(root) -> dict[str, str]:
    hashes = snap.warehouse_hashes(root / "data" / "warehouse.duckdb")["canonical"]
    return {name: digest for name, digest in hashes.items() if name.split(".")[0] in RESULT_SCHEMAS and name != "analysis.user_audit_catalog"}


def test_a_removed_benchmark_and_audit_leave_every_table_and_the_headline(tmp_path, small_base_run, session_cache):
    audits = tmp_path / "audits"
    audits.mkdir()
    example = REPO_ROOT / "audits" / "example-org.csv"
    shutil.copy(example, audits / "example-org.csv")
    shutil.copy(example, audits / "second-org.csv")
    first = tmp_path / "first"
    sources, _ = copy_small_run(small_base_run, first, session_cache)
    env = _env(first, sources, session_cache, audits)
    _run(env)  # the base run again, with a second audit
    assert _headline(first)["n_benchmarks"] == 3
    assert {r[0] for r in _query(first, "select distinct audit from analysis.user_audit")} == {"example-org", "second-org"}

    # paperbench's file and second-org's audit go away; the same data folder runs again.
    (sources / "benchmarks" / "paperbench.jsonl").unlink()
    (audits / "second-org.csv").unlink()
    _run(env)
    # The same sources from scratch, for comparison.
    fresh = tmp_path / "fresh"
    (tmp_path / "fresh_audits").mkdir()
    shutil.copy(example, tmp_path / "fresh_audits" / "example-org.csv")
    _run(_env(fresh, sources, session_cache, tmp_path / "fresh_audits"))

    after, expected = _headline(first), _headline(fresh)
    assert after["n_benchmarks"] == expected["n_benchmarks"] == 2
    assert after["n_prompts"] == expected["n_prompts"] == 39 + 50
    for key in ("n_labels", "n_prompts_labeled", "n_tasks_covered", "work_time_share_uncovered"):
        assert after[key] == expected[key], key
    for schema, table in (("raw", "benchmark_prompts"), ("raw", "benchmark_results"), ("labeling", "embedded_labels"), ("labeling", "embedded_judgements")):
        assert _query(first, f"select count(*) from {schema}.{table} where benchmark = 'paperbench'") == [(0,)], table
    assert _query(first, "select count(*) from raw._source_loads where partition_key = 'paperbench'") == [(0,)]
    assert {r[0] for r in _query(first, "select distinct audit from analysis.user_audit")} == {"example-org"}
    differences = snap.differences(_results(first), _results(fresh))
    assert differences == [], differences


def test_a_bad_file_fails_alone_and_every_other_benchmark_refreshes(tmp_path, source_dir, small_base_run, session_cache):
    root = tmp_path / "run"
    sources, env = copy_small_run(small_base_run, root, session_cache)
    # cybench breaks on its line 3; finance-agent changes (one prompt fewer); a new benchmark arrives.
    path = sources / "benchmarks" / "cybench.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][: len(lines[2]) // 2] + "\n"
    path.write_text("".join(lines))
    finance = sources / "benchmarks" / "finance-agent.jsonl"
    finance.write_text("".join(finance.read_text().splitlines(keepends=True)[:-1]))
    completed = _run(env, ok=False)
    output = completed.stdout + completed.stderr
    assert "cybench.jsonl:3" in output and "not valid JSON" in output  # the run ends failed, naming the file and line
    prompts = dict(_query(root, "select benchmark, count(*) from raw.benchmark_prompts group by 1"))
    assert prompts == {"cybench": 39, "finance-agent": 49, "paperbench": 23}  # cybench keeps its previous rows
    # finance-agent's change reached the marts and the headline; the report says which file failed and why.
    labeled = dict(_query(root, "select benchmark, count(distinct prompt_id) from marts.fct_prompt_task_labels group by 1"))
    assert labeled["finance-agent"] <= 49 and labeled["cybench"] >= 1
    headline = _headline(root)
    assert headline["n_prompts"] == 39 + 49 + 23
    assert "cybench.jsonl:3" in headline["benchmark_files_rejected"]["cybench"]
    page = (root / "data" / "outputs" / "report" / "index.html").read_text()
    assert "benchmark file(s) rejected" in page and "cybench.jsonl:3" in page
    # Mended, the next run succeeds and says nothing is rejected.
    path.write_text((source_dir / "benchmarks" / "cybench.jsonl").read_text())
    _run(env)
    assert _headline(root)["benchmark_files_rejected"] == {}


@pytest.mark.parametrize("change", ["changed", "removed"])
def test_a_changed_or_removed_results_file_updates_the_model_scores(tmp_path, small_base_run, session_cache, change):
    root = tmp_path / "run"
    sources, env = copy_small_run(small_base_run, root, session_cache)
    sql = "select model, onet_soc_code, weighted_score from analysis.occupation_model_scores where benchmark = 'cybench' order by 1, 2"
    before = _query(root, sql)
    assert before, "cybench has published results: some model scores"
    results = sources / "results" / "cybench.csv"
    if change == "removed":
        results.unlink()
    else:
        import pandas as pd

        frame = pd.read_csv(results)
        frame["score"] = 1.0 - frame["score"]  # every result flipped
        frame.to_csv(results, index=False)
    _run(env)
    after = _query(root, sql)
    assert after != before
    if change == "removed":
        assert after == [] and _query(root, "select count(*) from raw.benchmark_results where benchmark = 'cybench'") == [(0,)]
