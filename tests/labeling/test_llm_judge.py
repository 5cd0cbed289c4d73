"""The LLM judge against a real local HTTP server speaking the OpenAI API, with injected faults."""

from __future__ import annotations

import sqlite3

import openai
import pytest
from fake_openai import FakeOpenAI

from workbank_dagster.labeling.chat_model import LLMSettings
from workbank_dagster.labeling.judgement_cache import Judgement, JudgementCache
from workbank_dagster.labeling.llm_judge import LLMJudge
from workbank_dagster.labeling.llm_protocol import Failure, Item, MalformedAnswer, parse_answer

KEY = "sk-test-SECRET-never-logged"


def _items(n: int, faults: dict[int, str] | None = None) -> list[Item]:
    faults = faults or {}
    items = []
    for i in range(n):
        text = f"Prepare the quarterly budget report number {i}. {faults.get(i, '')}"
        candidates = tuple((1000 + i * 10 + j, f"Task statement {j}", "Accountants and Auditors") for j in range(4))
        items.append(Item(prompt_hash=f"hash{i}", prompt=text, candidates=candidates))
    return items


@pytest.fixture()
def server():
    with FakeOpenAI() as fake:
        yield fake


def _judge(server, tmp_path, monkeypatch, **overrides) -> LLMJudge:
    options = {"model": "fake-model", "base_url": server.base_url, "timeout_s": 0.5, "backoff_s": 0.01, "max_backoff_s": 0.2, "concurrency": 4}
    settings = LLMSettings(**{**options, **overrides})
    return LLMJudge(settings, JudgementCache(tmp_path / "judgements.sqlite"), api_key=KEY)


def test_clean_prompts_are_judged_concurrently_and_cached(server, tmp_path, monkeypatch):
    judge = _judge(server, tmp_path, monkeypatch)
    items = _items(12)
    report = judge.judge(items)
    assert report.failures == 0 and report.requests == 12 and server.counts["chat"] == 12
    for item in items:
        result = report.results[item.key]
        assert isinstance(result, Judgement) and result.task_ids == item.candidate_ids[:2]
    assert report.cost_usd > 0 and report.prompt_tokens > 0
    # Same items again: zero requests.
    again = _judge(server, tmp_path, monkeypatch).judge(items)
    assert again.from_cache == 12 and again.requests == 0 and server.counts["chat"] == 12
    # The request carried temperature 0 and a JSON-schema response format; the key went only in the header.
    body = server.chat_bodies[0]
    assert body["temperature"] == 0 and body["response_format"]["type"] == "json_schema"
    assert all(h == f"Bearer {KEY}" for h in server.auth_headers)


def test_faults_end_labeled_or_recorded_failed(server, tmp_path, monkeypatch):
    faults = {0: "[[fault:429*2]]", 1: "[[fault:500*1]]", 2: "[[fault:timeout*1]]", 3: "[[fault:malformed*1]]", 4: "[[fault:empty*9]]", 5: "[[fault:outside]]", 6: "[[fault:http400]]"}
    items = _items(9, faults)
    judge = _judge(server, tmp_path, monkeypatch)
    report = judge.judge(items)
    results = [report.results[item.key] for item in items]
    # Retried until they succeeded: 429 (honouring Retry-After), 500, time-out, malformed JSON.
    for i in (0, 1, 2, 3, 7, 8):
        assert isinstance(results[i], Judgement), (i, results[i])
    assert server.attempts[judge_text(items[0])] == 3
    # Always empty: failed after every attempt; 400: failed at once, no retry.
    assert isinstance(results[4], Failure) and results[4].reason == "empty answer" and results[4].attempts == 5
    assert isinstance(results[6], Failure) and "400" in results[6].reason and server.attempts[judge_text(items[6])] == 1
    # IDs outside the candidates are dropped and counted.
    assert results[5].task_ids == [items[5].candidate_ids[0]] and results[5].rejected_ids == [999_999_999, 888_888_888]
    assert report.rejected_ids == 2 and report.failures == 2
    # Every prompt ends labeled or recorded as failed; failures are not cached, successes are.
    assert len(report.results) == 9
    cache = JudgementCache(tmp_path / "judgements.sqlite")
    assert cache.count(judge.labeler) == 7


def judge_text_of(body: dict) -> str:
    return body["messages"][1]["content"]


def judge_text(item: Item) -> str:
    from workbank_dagster.labeling.llm_protocol import build_request

    return build_request(item, LLMSettings())["messages"][1]["content"]


def test_failure_budget_stops_the_run_keeping_what_was_done(server, tmp_path, monkeypatch):
    items = _items(3) + _items(20, {i: "[[fault:http400]]" for i in range(20)})[3:]
    judge = _judge(server, tmp_path, monkeypatch, failure_budget=2)
    report = judge.judge(items)
    assert report.stopped and "failure budget" in report.stopped
    assert sum(isinstance(r, Judgement) for r in report.results.values()) == 3
    assert any(isinstance(r, Failure) and r.reason.startswith("not sent") for r in report.results.values())
    assert JudgementCache(tmp_path / "judgements.sqlite").count() == 3


def test_spend_cap_stops_new_requests(server, tmp_path, monkeypatch):
    judge = _judge(server, tmp_path, monkeypatch, spend_cap_usd=1e-9, concurrency=1)
    report = judge.judge(_items(10))
    assert report.stopped and "spend cap" in report.stopped
    assert report.requests == 1 and server.counts["chat"] == 1


def test_dry_run_estimates_and_sends_nothing(server, tmp_path, monkeypatch):
    judge = _judge(server, tmp_path, monkeypatch)
    estimate = judge.estimate(_items(5))
    assert estimate["requests"] == 5 and estimate["estimated_prompt_tokens"] > 0 and estimate["estimated_cost_usd"] > 0
    assert server.counts["chat"] == 0
    judge.judge(_items(2))
    assert judge.estimate(_items(5))["requests"] == 3


def test_batch_mode_submits_polls_and_ingests_by_custom_id(server, tmp_path, monkeypatch):
    judge = _judge(server, tmp_path, monkeypatch)
    items = _items(6, {2: "[[fault:malformed]]"})
    batch_id, n = judge.submit_batch(items)
    assert n == 6 and server.counts["files"] == 1 and server.counts["batches"] == 1
    # Resubmitting while the batch is open reuses it.
    assert judge.submit_batch(items) == (batch_id, 6) and server.counts["batches"] == 1
    report = judge.collect_batch(items, batch_id, poll_s=0.0, max_wait_s=5)
    assert report is not None and server.counts["batch_poll"] >= 2
    assert isinstance(report.results[items[0].key], Judgement) and report.results[items[0].key].source == "batch"
    assert isinstance(report.results[items[2].key], Failure)
    assert server.counts["chat"] == 0
    # Ingested: nothing left open, and a sync run re-pays only the failed one.
    assert judge.cache.open_batch(judge.labeler) is None
    sync = judge.judge(items)
    assert sync.from_cache == 5
    assert {judge_text_of(body) for body in server.chat_bodies} == {judge_text(items[2])}  # only the failed prompt is asked again


def test_batch_results_for_other_benchmarks_are_kept_not_lost(server, tmp_path, monkeypatch):
    """A batch submitted by a run over some benchmarks and collected by a run over others: every
    paid result is cached for the prompt it belongs to, and the second run then sends its own."""
    judge = _judge(server, tmp_path, monkeypatch)
    first, second = _items(10)[:5], _items(10)[5:]
    batch_id, n = judge.submit_batch(first)
    assert n == 5
    report = judge.judge_by_batch(second, poll_s=0.0, max_wait_s=5)
    assert report.other_prompts == 5 and server.counts["batches"] == 2  # the open batch, then its own
    assert all(isinstance(report.results[i.key], Judgement) for i in second)
    assert judge.cache.open_batch(judge.labeler) is None
    # The first run's prompts were answered by the batch the second run collected: nothing is asked again.
    again = _judge(server, tmp_path, monkeypatch).judge(first)
    assert again.from_cache == 5 and again.requests == 0 and server.counts["chat"] == 0
    assert [again.results[i.key].task_ids for i in first] == [i.candidate_ids[:2] for i in first]


def test_batch_over_the_spend_cap_is_not_sent(server, tmp_path, monkeypatch):
    from workbank_dagster.labeling.llm_batch import BatchOverSpendCap

    judge = _judge(server, tmp_path, monkeypatch, spend_cap_usd=0.000001)
    with pytest.raises(BatchOverSpendCap, match="above the spend cap"):
        judge.submit_batch(_items(5))
    assert server.counts["files"] == 0 and server.counts["batches"] == 0
    assert judge.cache.open_batch(judge.labeler) is None


def test_batch_mode_survives_429_and_500_on_every_endpoint(tmp_path, monkeypatch):
    """30% of the requests to every endpoint (upload, batch creation, look-up, polling, results,
    chat completions) answered 429 and 10% 500: the client's retries carry every call through, the
    batch is created once, and no uploaded file is left behind."""
    with FakeOpenAI(fault_rates={429: 0.3, 500: 0.1}, seed=7) as server:
        judge = _judge(server, tmp_path, monkeypatch, concurrency=1)  # one request at a time: the same faults every run
        items = _items(6)
        report = judge.judge_by_batch(items, poll_s=0.0, max_wait_s=10)
        assert report.failures == 0 and all(isinstance(report.results[i.key], Judgement) for i in items)
        assert len(server.batches) == 1 and server.leftover_uploads() == []
        for endpoint in ("files", "batches", "batch_list", "batch_poll", "file_content"):
            assert server.injected[endpoint] >= 1, endpoint  # every endpoint met faults (seed 7)
        sync = judge.judge(_items(12)[6:])
        assert sync.failures == 0 and sync.requests == 6 and server.injected["chat"] >= 1
        assert judge.client.max_retries == judge.settings.max_attempts - 1
        assert judge.control.max_retries == judge.settings.batch_control_attempts - 1  # control calls: their own attempts


@pytest.mark.parametrize("fault", ["lost", "timeout"])
def test_a_lost_batch_creation_answer_does_not_create_a_second_batch(tmp_path, monkeypatch, fault):
    """The batch is created but its answer is lost (a 500, or a time-out): the batch is found by its
    tag and reused, not created (and paid for) again."""
    with FakeOpenAI(scripts={"batches": [fault]}) as server:
        judge = _judge(server, tmp_path, monkeypatch)
        items = _items(5)
        batch_id, n = judge.submit_batch(items)
        assert n == 5 and len(server.batches) == 1 and batch_id in server.batches and server.counts["batches"] == 1
        tag = server.batches[batch_id]["metadata"]["workbank_request"]
        assert judge.cache.batch_tag(batch_id) == tag and len(tag) == 64
        report = judge.collect_batch(items, batch_id, poll_s=0.0, max_wait_s=5)
        assert all(isinstance(report.results[i.key], Judgement) for i in items)
        assert server.counts["files"] == 1 and server.leftover_uploads() == []


def test_a_batch_created_by_a_failed_submission_is_reused_by_the_next(tmp_path, monkeypatch):
    """The creation's answer is lost and the look-up after it fails too: that submission fails not
    knowing whether the batch exists. The next one finds the batch by its tag before creating one."""
    with FakeOpenAI(scripts={"batches": ["lost"], "batch_list": ["ok", "500", "500"]}) as server:
        judge = _judge(server, tmp_path, monkeypatch, max_attempts=2, batch_control_attempts=2)
        items = _items(5)
        with pytest.raises(openai.InternalServerError):
            judge.submit_batch(items)
        assert len(server.batches) == 1 and judge.cache.open_batch(judge.labeler) is None
        report = judge.judge_by_batch(items, poll_s=0.0, max_wait_s=5)
        assert len(server.batches) == 1 and server.counts["files"] == 1  # neither uploaded nor created again
        assert all(isinstance(report.results[i.key], Judgement) for i in items)
        assert server.leftover_uploads() == []


@pytest.mark.parametrize("faults", [["400"], ["500", "500"]])
def test_a_failed_batch_creation_deletes_its_upload(tmp_path, monkeypatch, faults):
    """A 400 fails at once; 500s are tried again (after a look-up finds no batch) until the attempts
    are spent. Either way no batch exists, so the uploaded input file is deleted."""
    with FakeOpenAI(scripts={"batches": faults}) as server:
        judge = _judge(server, tmp_path, monkeypatch, max_attempts=2, batch_control_attempts=2)
        with pytest.raises(openai.APIStatusError):
            judge.submit_batch(_items(5))
        assert server.counts["batches"] == len(faults) and not server.batches
        assert server.counts["files"] == 1 and server.leftover_uploads() == []


def test_uploads_left_by_a_failed_submission_are_deleted_by_the_next(tmp_path, monkeypatch):
    """Creation fails and so does the look-up after it: the upload is kept (a batch might use it).
    The next submission finds no batch with the tag, deletes that upload, and submits afresh."""
    with FakeOpenAI(scripts={"batches": ["500"], "batch_list": ["ok", "500", "500"]}) as server:
        judge = _judge(server, tmp_path, monkeypatch, max_attempts=2, batch_control_attempts=2)
        items = _items(5)
        with pytest.raises(openai.InternalServerError):
            judge.submit_batch(items)
        assert not server.batches and len(server.leftover_uploads()) == 1
        batch_id, _ = judge.submit_batch(items)
        assert list(server.batches) == [batch_id] and server.counts["files"] == 2
        assert server.leftover_uploads() == [] and server.counts["file_delete"] == 1


def test_ids_all_outside_the_candidates_are_asked_again_then_recorded_apart(server, tmp_path, monkeypatch):
    faults = {0: "[[fault:alloutside*1]]", 1: "[[fault:alloutside]]", 2: "[[fault:none]]", 3: "[[fault:outside]]"}
    items = _items(5, faults)
    judge = _judge(server, tmp_path, monkeypatch)
    report = judge.judge(items)
    results = [report.results[item.key] for item in items]
    # All outside, asked again once: the second answer labels it (the first one's IDs are counted).
    assert server.attempts[judge_text(items[0])] == 2
    assert isinstance(results[0], Judgement) and results[0].task_ids == items[0].candidate_ids[:2] and len(results[0].rejected_ids) == 3
    # All outside twice: its own outcome, neither a judgement (the model choosing none) nor a failure.
    assert server.attempts[judge_text(items[1])] == 2 and not isinstance(results[1], (Judgement, Failure))
    assert results[1].reason.startswith("3 id(s), all outside the candidates") and results[1].answers == 2
    # An empty list is the model choosing none: asked once, a judgement.
    assert server.attempts[judge_text(items[2])] == 1 and results[2] == Judgement([], [], *_usage(results[2]), "sync")
    # Some kept, some rejected: labeled, the rejected counted.
    assert results[3].task_ids == [items[3].candidate_ids[0]] and results[3].rejected_ids == [999_999_999, 888_888_888]
    assert report.out_of_candidates == 1 and report.failures == 0 and report.rejected_ids == 3 + 6 + 2
    # Not cached: a re-run asks again (twice), and only that prompt.
    assert judge.cache.count(judge.labeler) == 4
    again = _judge(server, tmp_path, monkeypatch).judge(items)
    assert again.from_cache == 4 and again.requests == 2 and server.attempts[judge_text(items[1])] == 4


def _usage(judgement: Judgement) -> tuple:
    return judgement.prompt_tokens, judgement.completion_tokens, judgement.cost_usd


def test_batch_answers_all_outside_the_candidates_are_not_cached(server, tmp_path, monkeypatch):
    items = _items(3, {1: "[[fault:alloutside]]"})
    judge = _judge(server, tmp_path, monkeypatch)
    report = judge.judge_by_batch(items, poll_s=0.0, max_wait_s=5)
    assert not isinstance(report.results[items[1].key], (Judgement, Failure)) and report.out_of_candidates == 1
    assert report.results[items[1].key].reason.startswith("3 id(s), all outside the candidates")
    assert judge.cache.count(judge.labeler) == 2 and report.rejected_ids == 3
    assert judge.pending(items)[0] == [items[1]]  # the next run asks again


def test_cache_written_before_batches_were_tagged_is_migrated(tmp_path):
    path = tmp_path / "judgements.sqlite"
    con = sqlite3.connect(path)
    con.execute(  # the batches table as it was before request_tag
        "CREATE TABLE batches (labeler TEXT NOT NULL, batch_id TEXT PRIMARY KEY, input_file_id TEXT, status TEXT NOT NULL, "
        "n_requests INTEGER NOT NULL, created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    con.execute(
        "INSERT INTO batches (labeler, batch_id, input_file_id, status, n_requests) VALUES ('llm:m:t2', 'batch_old', 'file-old', 'in_progress', 3)"
    )
    con.commit()
    con.close()
    cache = JudgementCache(path)
    with sqlite3.connect(path) as con:
        assert "request_tag" in {row[1] for row in con.execute("PRAGMA table_info(batches)")}
    assert cache.open_batch("llm:m:t2") == ("batch_old", 3)  # the old batch is still polled
    cache.record_batch("llm:m:t2", "batch_new", "file-new", "validating", {"h:c": [1, 2]}, "tag-1")
    JudgementCache(path)  # opening a migrated cache again changes nothing
    with sqlite3.connect(path) as con:
        tags = con.execute("SELECT batch_id, request_tag FROM batches ORDER BY batch_id").fetchall()
    assert tags == [("batch_new", "tag-1"), ("batch_old", None)]


def test_parse_answer():
    assert parse_answer('{"task_ids": [3, 1, 3, 9]}', [1, 2, 3], 5) == ([3, 1], [9])
    assert parse_answer('{"task_ids": [1, 2, 3]}', [1, 2, 3], 2) == ([1, 2], [])
    for bad in ("", None, "[1,2]", '{"ids": []}', "nope"):
        with pytest.raises(MalformedAnswer):
            parse_answer(bad, [1], 5)
