"""The LLM judge: a chat model, through the OpenAI API or any OpenAI-compatible server, picks which of a
prompt's retrieved candidate tasks the prompt exercises (docs/method.md §3, the article's method).

The request and the answer are llm_protocol.py's; the Batch API is llm_batch.py's.

- IDs outside the candidates are dropped and counted. A malformed or empty answer is asked again,
  then recorded as a failure. An answer whose IDs are all outside the candidates is asked again
  once; if the second one is too, it is recorded as `out_of_candidates` (not cached: a re-run asks
  again). An empty list is the model choosing none (`no_match`), a usable answer that is cached.
- Requests run concurrently up to a limit; every judgement is written to the judgement cache the
  moment it arrives. A failure budget stops the work (the asset then fails loudly, keeping what was
  done) and a spend cap stops new requests once the measured cost reaches it.
"""

from __future__ import annotations

import concurrent.futures
import random
import threading
import time
from collections.abc import Callable

from .chat_model import LLMSettings
from .judgement_cache import Judgement, JudgementCache
from .llm_batch import BatchJudging
from .llm_protocol import (
    EXPECTED_COMPLETION_TOKENS,
    TEMPLATE_VERSION,
    Failure,
    Item,
    MalformedAnswer,
    OutOfCandidates,
    RunReport,
    build_request,
    estimate_prompt_tokens,
    make_client,
    parse_answer,
    requests_made,
    retryable_status,
)


class LLMJudge(BatchJudging):
    def __init__(
        self,
        settings: LLMSettings,
        cache: JudgementCache,
        api_key: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        log: Callable[[str], None] = lambda message: None,
    ) -> None:
        """`api_key` is only needed once a request is sent (a dry run's `estimate` sends none)."""
        self.settings = settings
        self._api_key = api_key
        self.cache = cache
        self._client = None
        self._sleep = sleep
        self._log = log
        self._lock = threading.Lock()

    @property
    def labeler(self) -> str:
        return f"llm:{self.settings.model}:{TEMPLATE_VERSION}"

    @property
    def client(self):
        if self._client is None:
            self._client = make_client(self.settings, self._api_key)
        return self._client


    # --- planning -----------------------------------------------------------------------------
    def pending(self, items: list[Item]) -> tuple[list[Item], dict]:
        cached = self.cache.get_many(self.labeler, [item.key for item in items])
        todo, seen = [], set()
        for item in items:
            if item.key not in cached and item.key not in seen:
                todo.append(item)
                seen.add(item.key)
        return todo, cached

    def estimate(self, items: list[Item], *, batch: bool = False) -> dict:
        """Dry run: what judging `items` would send and cost, before anything is sent."""
        todo, cached = self.pending(items)
        prompt_tokens = sum(estimate_prompt_tokens(build_request(item, self.settings)) for item in todo)
        completion_tokens = EXPECTED_COMPLETION_TOKENS * len(todo)
        n_cached = sum(1 for item in items if item.key in cached)
        return {
            "labeler": self.labeler,
            "prompts": len(items),
            "cached": n_cached,
            "duplicates": len(items) - n_cached - len(todo),  # same text and candidates: judged once
            "requests": len(todo),
            "estimated_prompt_tokens": prompt_tokens,
            "estimated_completion_tokens": completion_tokens,
            "estimated_cost_usd": round(self.settings.cost(prompt_tokens, completion_tokens, batch=batch), 4),
            "mode": "batch" if batch else "sync",
        }

    # --- synchronous judging ------------------------------------------------------------------
    def _call(self, item: Item, report: RunReport) -> Judgement | Failure | OutOfCandidates:
        """One prompt: transport faults are the client's to retry; a malformed answer is asked again up to
        `max_attempts` times, and an answer whose IDs are all outside the candidates once."""
        import openai

        body = build_request(item, self.settings)
        reason, sent, outside, dropped = "no attempt", 0, 0, []
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                response = self.client.chat.completions.create(**body)
            except openai.APIStatusError as exc:  # what could be retried was, by the client
                sent += requests_made(exc)
                return Failure(f"HTTP {exc.status_code}" + ("" if retryable_status(exc.status_code) else ": not retryable"), sent)
            except openai.APIConnectionError as exc:  # time-outs too
                return Failure(type(exc).__name__, sent + requests_made(exc))
            sent += 1
            usage = getattr(response, "usage", None)
            prompt_tokens = getattr(usage, "prompt_tokens", 0) or 0
            completion_tokens = getattr(usage, "completion_tokens", 0) or 0
            cost = self.settings.cost(prompt_tokens, completion_tokens)
            with self._lock:
                report.requests += 1
                report.prompt_tokens += prompt_tokens
                report.completion_tokens += completion_tokens
                report.cost_usd += cost
            content = response.choices[0].message.content if response.choices else None
            try:
                kept, rejected = parse_answer(content, item.candidate_ids, self.settings.max_labels)
            except MalformedAnswer as exc:
                reason = str(exc)
            else:
                with self._lock:
                    report.rejected_ids += len(rejected)
                if kept or not rejected:  # a usable answer: labels, or the model choosing none
                    return Judgement(kept, dropped + rejected, prompt_tokens, completion_tokens, cost, "sync")
                outside += 1
                dropped += rejected
                if outside >= 2 or attempt == self.settings.max_attempts:
                    return OutOfCandidates(rejected, outside, sent)
                reason = f"{len(rejected)} id(s), all outside the candidates"
            if attempt < self.settings.max_attempts:
                delay = min(self.settings.backoff_s * 2 ** (attempt - 1), self.settings.max_backoff_s)
                self._sleep(delay * random.uniform(0.8, 1.2))
        return Failure(reason, sent)

    def judge(self, items: list[Item]) -> RunReport:
        report = RunReport()
        todo, cached = self.pending(items)
        report.results.update(cached)
        report.from_cache = len(items) - len(todo)
        if not todo:
            return report
        queue = list(todo)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency)) as pool:
            running: dict[concurrent.futures.Future, Item] = {}
            while queue or running:
                while queue and len(running) < self.settings.concurrency and report.stopped is None:
                    item = queue.pop(0)
                    running[pool.submit(self._call, item, report)] = item
                if not running:
                    break
                done, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    item = running.pop(future)
                    outcome = future.result()
                    report.results[item.key] = outcome
                    if isinstance(outcome, Judgement):
                        self.cache.put(self.labeler, item.key[0], item.key[1], outcome)  # written as it arrives
                    elif isinstance(outcome, OutOfCandidates):  # not cached: a re-run asks again
                        report.out_of_candidates += 1
                        self._log(f"judgement out of candidates after {outcome.attempts} request(s): {outcome.reason}")
                    else:
                        report.failures += 1
                        self._log(f"judgement failed after {outcome.attempts} attempt(s): {outcome.reason}")
                if report.stopped is None and report.failures > self.settings.failure_budget:
                    report.stopped = f"failure budget exceeded ({report.failures} > {self.settings.failure_budget})"
                if report.stopped is None and report.cost_usd >= self.settings.spend_cap_usd:
                    report.stopped = f"spend cap reached (${report.cost_usd:.4f} >= ${self.settings.spend_cap_usd})"
        for item in queue:
            report.results.setdefault(item.key, Failure(f"not sent: {report.stopped}", 0))
        return report
