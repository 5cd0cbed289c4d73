"""The LLM labels asset end to end against the local OpenAI-compatible server: rows, re-runs that pay
nothing, a crash (SIGKILL) mid-partition that loses nothing paid for, and a key that never leaks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib

import dagster as dg
import duckdb
import pytest
from conftest import small_source_dir
from fake_openai import FakeOpenAI
from partition_tables import partition_tables

from workbank_dagster.labeling.chat_model import ChatModelResource
from workbank_dagster.labeling.judge_assets import llm_judge_labels
from workbank_dagster.labeling.matching import LabelingRuntime
from workbank_dagster.resources import Warehouse
from workbank_dagster.settings import REPO_ROOT, PipelineSettings
from workbank_dagster.sources.benchmark_assets import benchmark_instructions, benchmark_prompts
from workbank_dagster.sources.instructions import read_instructions

KEY = "sk-test-SECRET-do-not-leak-42"
PARTITION = "cybench"  # 39 prompts


@pytest.fixture()
def llm_env(workbank_env, tmp_path, reduced_source_dir, monkeypatch, onet_base):
    sources = small_source_dir(tmp_path, reduced_source_dir, (PARTITION,))
    monkeypatch.setenv("WORKBANK_SOURCE_DIR", str(sources))
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    # The LLM judge's candidates are the default judge's (v7): the O*NET tables, the task index and the prior
    # (its titles, technology and prior) come from the session's O*NET base, copied.
    shutil.copytree(onet_base, workbank_env)
    db = workbank_env / "warehouse.duckdb"
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", [PARTITION])
    resources = {"warehouse_db": Warehouse(db), "labeling_runtime": LabelingRuntime(), "pipeline_settings": PipelineSettings.from_env()}
    assert dg.materialize([benchmark_prompts, benchmark_instructions], instance=instance, resources=resources, partition_key=PARTITION).success
    return {"db": db, "instance": instance, "resources": resources, "data_dir": workbank_env}


def _chat(server: FakeOpenAI, **overrides) -> ChatModelResource:
    options = {"model": "fake-model", "base_url": server.base_url, "api_key": dg.EnvVar("TEST_LLM_KEY"), "timeout_s": 5.0, "concurrency": 4}
    return ChatModelResource(**{**options, **overrides})


def _run(env, server, config=None, **overrides):
    return dg.materialize(
        [llm_judge_labels],
        instance=env["instance"],
        partition_key=PARTITION,
        resources={**env["resources"], "chat_model": _chat(server, **overrides)},
        run_config={"ops": {"llm_judge_labels": {"config": config or {}}}},
        raise_on_error=False,
    )


def test_llm_labels_written_and_rerun_pays_nothing(llm_env):
    with FakeOpenAI() as server:
        first = _run(llm_env, server)
        assert first.success
        assert server.counts["chat"] == 39
        second = _run(llm_env, server)
        assert second.success and server.counts["chat"] == 39  # zero model calls on a re-run
    with partition_tables(llm_env["data_dir"] / "partitions") as con:
        labels = con.execute("select count(*), count(distinct prompt_id), min(labeler), max(rank) from labeling.llm_labels").fetchone()
        statuses = dict(con.execute("select status, count(*) from labeling.llm_judgements group by 1").fetchall())
    assert labels == (78, 39, "llm:fake-model:t3", 2)
    assert statuses == {"labeled": 39}
    # Template t3 sends the benchmark's instruction (benchmarks/instructions.jsonl) with every prompt (#38).
    told = read_instructions(PipelineSettings.from_env().resolve().benchmark_instructions)[PARTITION].text
    assert all(told in body["messages"][1]["content"] for body in server.chat_bodies) and len(server.chat_bodies) == 39
    metadata = [e for e in second.asset_materializations_for_node("llm_judge_labels") if e.asset_key == dg.AssetKey(["labeling", "llm_labels"])][0].metadata
    assert metadata["requests"].value == 0 and metadata["from_cache"].value == 39


def test_batch_mode_through_the_asset(llm_env):
    with FakeOpenAI(batch_polls_until_done=2) as server:
        result = _run(llm_env, server, config={"mode": "batch", "batch_poll_seconds": 0.0, "batch_max_wait_seconds": 10})
        assert result.success
        assert server.counts["chat"] == 0 and server.counts["batches"] == 1 and server.counts["files"] == 1
    with partition_tables(llm_env["data_dir"] / "partitions") as con:
        assert con.execute("select count(distinct prompt_id) from labeling.llm_labels").fetchone()[0] == 39


def test_an_upload_answered_429_is_sent_again_by_the_client(llm_env):
    """An operator saw an upload give up after one 429 "without a single retry": a 429 on the
    upload is retried, with the whole file, and the batch goes through."""
    with FakeOpenAI(scripts={"files": ["429"]}) as server:
        result = _run(llm_env, server, config={"mode": "batch", "batch_poll_seconds": 0.0, "batch_max_wait_seconds": 10})
        assert result.success
        assert server.counts["files"] == 2 and server.injected["files"] == 1 and len(server.uploads) == 1
        assert server.files[server.uploads[0]].decode().count("\n") == 39  # the file sent again whole
        assert server.counts["batches"] == 1


def test_a_burst_of_429s_longer_than_the_control_attempts_is_outlasted_by_the_step_retry(llm_env):
    """Six 429s in a row on the upload, against 3 attempts per control call: the step fails twice
    and its RetryPolicy runs it again; one batch in all, and every prompt paid for once."""
    with FakeOpenAI(scripts={"files": ["429"] * 6}) as server:
        result = _run(llm_env, server, config={"mode": "batch", "batch_poll_seconds": 0.0, "batch_max_wait_seconds": 10},
                      batch_control_attempts=3)
        assert result.success
        events = [event.event_type_value for event in result.all_events]
        assert events.count("STEP_RESTARTED") == 2 and events.count("STEP_UP_FOR_RETRY") == 2
        assert server.injected["files"] == 6 and server.counts["files"] == 7
        assert len(server.batches) == 1 and server.counts["batches"] == 1  # exactly one batch exists
        batch = next(iter(server.batches.values()))
        assert server.files[batch["input_file_id"]].decode().count("\n") == 39 and server.counts["chat"] == 0
        assert server.leftover_uploads() == []
    with partition_tables(llm_env["data_dir"] / "partitions") as con:
        assert con.execute("select count(*), count(distinct prompt_id) from labeling.llm_judgements").fetchone() == (39, 39)


def test_answers_all_outside_the_candidates_get_their_own_status(llm_env):
    """A quarter of the prompts answered only with IDs outside the candidates, each time: asked again
    once, then recorded as out_of_candidates (not no_match), not cached, so a re-run asks again."""
    with FakeOpenAI() as server:
        clean = server.answer

        def outside(text: str) -> bool:
            return zlib.crc32(text.encode()) % 4 == 0

        def answer(request):
            if outside(server._user_text(request)):
                return json.dumps({"task_ids": [999_999_999, 888_888_888, 777_777_777]}), {"prompt_tokens": 10, "completion_tokens": 5}
            return clean(request)

        server.answer = answer
        first = _run(llm_env, server)
        assert first.success
        asked = [text for text in server.attempts if outside(text)]
        assert asked and all(server.attempts[text] == 2 for text in asked)  # asked again once
        with partition_tables(llm_env["data_dir"] / "partitions") as con:
            statuses = dict(con.execute("select status, count(*) from labeling.llm_judgements group by 1").fetchall())
            outside_rows = con.execute("select reason, n_labels from labeling.llm_judgements where status = 'out_of_candidates'").fetchall()
        reasons, unlabeled = {reason for reason, _ in outside_rows}, sum(1 for _, n_labels in outside_rows if n_labels > 0)
        assert statuses == {"labeled": 39 - len(asked), "out_of_candidates": len(asked)}
        assert reasons == {"3 id(s), all outside the candidates (2 answer(s))"} and unlabeled == 0
        events = first.asset_materializations_for_node("llm_judge_labels")
        metadata = next(e for e in events if e.asset_key == dg.AssetKey(["labeling", "llm_labels"])).metadata
        assert metadata["out_of_candidates"].value == len(asked) and metadata["failures"].value == 0
        # Not cached: a re-run asks those prompts again (twice each), and only those.
        second = _run(llm_env, server)
        assert second.success and server.counts["chat"] == 39 + 3 * len(asked)


def test_llm_outcomes_statuses():
    from workbank_dagster.labeling.judgement_cache import Judgement
    from workbank_dagster.labeling.llm_labels import llm_outcomes
    from workbank_dagster.labeling.llm_protocol import Failure, Item, OutOfCandidates

    items = [Item(f"h{i}", f"prompt {i}", ((10 * i + 1, "task", "occupation"),)) for i in range(5)]
    outcomes = [
        Judgement([1], [], 1, 1, 0.0, "sync"),
        Judgement([11], [7, 8], 1, 1, 0.0, "sync"),
        Judgement([], [], 1, 1, 0.0, "sync"),
        OutOfCandidates([7, 8, 9], 2, 2),
        Failure("HTTP 400: not retryable", 1),
    ]
    chosen, statuses = llm_outcomes(items, {item.key: outcome for item, outcome in zip(items, outcomes)})
    assert chosen == [[(1, 1.0)], [(11, 1.0)], [], [], []]
    assert statuses == [
        ("labeled", ""),
        ("labeled", "2 id(s) outside the candidates dropped"),
        ("no_match", "the model chose none of the candidates"),
        ("out_of_candidates", "3 id(s), all outside the candidates (2 answer(s))"),
        ("failed", "HTTP 400: not retryable"),
    ]


def test_failure_budget_fails_loudly_and_keeps_what_was_done(llm_env):
    # A server whose every answer is malformed: the budget (2 failures) stops the run.
    with FakeOpenAI() as server:
        server.answer = lambda request: ("{not json", {"prompt_tokens": 10, "completion_tokens": 2})
        result = _run(llm_env, server, failure_budget=2, max_attempts=1, concurrency=1)
    assert not result.success
    # A spent budget is not a passing fault: the step is not run again (each retry paid 3 more
    # requests before allow_retries=False), and the server saw the budget's 2 failures and one more.
    assert not [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_RESTARTED]
    assert server.counts["chat"] == 3
    failure = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE][0]
    assert "failure budget" in failure.step_failure_data.user_failure_data.description
    with partition_tables(llm_env["data_dir"] / "partitions") as con:
        statuses = dict(con.execute("select status, count(*) from labeling.llm_judgements group by 1").fetchall())
    assert statuses.get("failed") == 39  # recorded, with the reason: judged ones failed, the rest not sent


def test_crash_mid_partition_then_rerun_repays_nothing(llm_env, monkeypatch):
    with FakeOpenAI() as server:
        slow = server.answer

        def delayed(request):
            time.sleep(0.15)
            return slow(request)

        server.answer = delayed
        env = {
            **os.environ,
            "WORKBANK_LLM_BASE_URL": server.base_url,
            "WORKBANK_LLM_MODEL": "fake-model",
            "WORKBANK_LLM_API_KEY_ENV": "TEST_LLM_KEY",
            "WORKBANK_LLM_CONCURRENCY": "2",
            "PYTHONPATH": f"{REPO_ROOT}{os.pathsep}{REPO_ROOT / 'tests' / 'support'}",
        }
        child = subprocess.Popen([sys.executable, str(REPO_ROOT / "tests" / "support" / "llm_partition_run.py"), PARTITION], env=env, cwd=REPO_ROOT)
        deadline = time.monotonic() + 120
        while server.counts["chat"] < 10 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        paid_before = server.counts["chat"]
        assert 10 <= paid_before < 39, paid_before
        server.answer = slow
        rerun = _run(llm_env, server)
        assert rerun.success
        # Every prompt was asked exactly once overall, except those in flight at the kill (answered
        # but not yet cached): at most the concurrency limit.
        repeated = sum(count - 1 for count in server.attempts.values() if count > 1)
        assert repeated <= 2, repeated
        assert len(server.attempts) == 39
    with partition_tables(llm_env["data_dir"] / "partitions") as con:
        rows = con.execute("select count(*), count(distinct prompt_id || ':' || task_id) from labeling.llm_labels").fetchone()
        assert rows[0] == rows[1] == 78  # every prompt labeled once, no duplicate rows


def test_api_key_never_reaches_storage_logs_or_metadata(llm_env, capfd):
    with FakeOpenAI() as server:
        result = _run(llm_env, server)
        assert result.success
        assert all(h == f"Bearer {KEY}" for h in server.auth_headers)
    for event in result.all_events:
        assert KEY not in str(event)
    con = duckdb.connect(str(llm_env["db"]), read_only=True)
    try:
        for schema, table in con.execute("select table_schema, table_name from information_schema.tables").fetchall():
            for (cell,) in con.execute(f'select cast(t as varchar) from "{schema}"."{table}" as t').fetchall():
                assert KEY not in cell
    finally:
        con.close()
    for path in [*llm_env["data_dir"].rglob("*"), llm_env["data_dir"].parent / "judgements.sqlite"]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    captured = capfd.readouterr()
    assert KEY not in captured.out and KEY not in captured.err
