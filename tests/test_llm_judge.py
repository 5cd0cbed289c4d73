"""The LLM judge against a real local HTTP server speaking the OpenAI API, with injected faults."""

from __future__ import annotations

import pytest

from fake_openai import FakeOpenAI
from workbank_dagster.labeling.judgement_cache import Judgement, JudgementCache
from workbank_dagster.labeling.llm import Failure, Item, LLMJudge, LLMSettings, parse_answer, MalformedAnswer

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
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    options = {"model": "fake-model", "base_url": server.base_url, "api_key_env": "TEST_LLM_KEY", "timeout_s": 0.5, "backoff_s": 0.01, "max_backoff_s": 0.2, "concurrency": 4}
    settings = LLMSettings(**{**options, **overrides})
    return LLMJudge(settings, JudgementCache(tmp_path / "judgements.sqlite"))


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
    from workbank_dagster.labeling.llm import build_request

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
    from workbank_dagster.labeling.llm import BatchOverSpendCap

    judge = _judge(server, tmp_path, monkeypatch, spend_cap_usd=0.000001)
    with pytest.raises(BatchOverSpendCap, match="above the spend cap"):
        judge.submit_batch(_items(5))
    assert server.counts["files"] == 0 and server.counts["batches"] == 0
    assert judge.cache.open_batch(judge.labeler) is None


def test_parse_answer():
    assert parse_answer('{"task_ids": [3, 1, 3, 9]}', [1, 2, 3], 5) == ([3, 1], [9])
    assert parse_answer('{"task_ids": [1, 2, 3]}', [1, 2, 3], 2) == ([1, 2], [])
    for bad in ("", None, "[1,2]", '{"ids": []}', "nope"):
        with pytest.raises(MalformedAnswer):
            parse_answer(bad, [1], 5)
