"""The LLM judge's Batch API: the methods of LLMJudge (llm_judge.py) that judge through batches,
kept as its base class BatchJudging.

- Batch mode writes the same requests as JSONL, uploads them, creates a batch, polls it, and
  ingests the results by `custom_id`; an open batch is polled again on the next run, never resubmitted.
  Creating a batch is not idempotent, so each batch carries a tag (`metadata.workbank_request`, a
  hash of the labeler and its request keys): before creating a batch, and before trying a failed
  creation again, the batch is looked up by its tag and reused if it exists (a creation whose
  answer was lost is not paid for twice). An uploaded input file that no batch uses is deleted.
"""

from __future__ import annotations

import hashlib
import json
import random
import time

from .judgement_cache import Judgement
from .llm_protocol import (
    Failure,
    Item,
    MalformedAnswer,
    OutOfCandidates,
    RunReport,
    build_request,
    parse_answer,
    retry_after_seconds,
    retryable_status,
)

BATCH_TAG = "workbank_request"  # the metadata key a batch is tagged with at creation
BATCH_LOOKUP_LIMIT = 500  # most recent batches searched for a tag (the API lists newest first)
CLOSED_BATCH = ("failed", "expired", "cancelling", "cancelled")  # a batch found by its tag in these states is not reused


class BatchStillRunning(Exception):
    def __init__(self, batch_id: str, n_requests: int) -> None:
        super().__init__(f"batch {batch_id} ({n_requests} requests) is still running; materialize again to collect it")
        self.batch_id, self.n_requests = batch_id, n_requests


class BatchOverSpendCap(Exception):
    pass


def request_tag(labeler: str, custom_ids) -> str:
    """A batch's deterministic tag: the same labeler and requests give the same tag."""
    return hashlib.sha256("\n".join([labeler, *sorted(custom_ids)]).encode()).hexdigest()


def _custom_id(item: Item) -> str:
    return f"{item.key[0]}:{item.key[1]}"


class BatchJudging:
    """LLMJudge's Batch API methods (LLMJudge derives from this class): they use the judge's settings,
    cache, client, log and sleep, and its planning (`pending`, `estimate`) and synchronous `judge`."""

    @property
    def control(self):
        """The client for Batch control calls: `batch_control_attempts` attempts each."""
        return self.client.with_options(max_retries=max(self.settings.batch_control_attempts - 1, 0))

    def submit_batch(self, items: list[Item]) -> tuple[str, int] | None:
        """Upload the uncached requests as JSONL and create a batch; an open batch is reused.

        A batch whose estimated cost (Batch API prices) is above the spend cap is not sent: a batch
        cannot be stopped halfway the way synchronous requests can. A batch already created for the
        same requests (found by its tag: an earlier creation whose answer was lost) is reused, not
        paid for again; uploads left by earlier failed submissions are deleted."""
        existing = self.cache.open_batch(self.labeler)
        if existing:
            return existing
        todo, _ = self.pending(items)
        if not todo:
            return None
        estimated = self.estimate(todo, batch=True)["estimated_cost_usd"]
        if estimated > self.settings.spend_cap_usd:
            raise BatchOverSpendCap(
                f"a batch of {len(todo)} requests is estimated at ${estimated:.2f}, above the spend cap "
                f"${self.settings.spend_cap_usd:.2f}; nothing was sent (raise WORKBANK_LLM_SPEND_CAP_USD or label fewer benchmarks)"
            )
        requests = {_custom_id(i): i.candidate_ids for i in todo}
        tag = request_tag(self.labeler, requests)
        batch = self._find_batch(tag)
        if batch is not None:
            self._log(f"batch {batch.id} ({batch.status}) was already created for these {len(todo)} requests: reused")
        else:
            self._delete_unused_uploads()
            lines = [
                json.dumps(
                    {"custom_id": _custom_id(i), "method": "POST", "url": "/v1/chat/completions", "body": build_request(i, self.settings)}
                )
                for i in todo
            ]
            uploaded = self.control.files.create(file=("requests.jsonl", ("\n".join(lines) + "\n").encode()), purpose="batch")
            self.cache.record_upload(self.labeler, uploaded.id, tag)
            batch = self._create_batch(uploaded.id, tag)
            self._log(f"submitted batch {batch.id} with {len(todo)} requests")
        self.cache.record_batch(self.labeler, batch.id, batch.input_file_id, batch.status, requests, tag)
        self._delete_unused_uploads()
        return batch.id, len(todo)

    def _find_batch(self, tag: str):
        """The batch created with this tag that this cache has not recorded and that is not closed, if any."""
        for n, batch in enumerate(self.control.batches.list(limit=100), start=1):
            if (batch.metadata or {}).get(BATCH_TAG) == tag and batch.status not in CLOSED_BATCH and not self.cache.has_batch(batch.id):
                return batch
            if n >= BATCH_LOOKUP_LIMIT:
                break
        return None

    def _create_batch(self, input_file_id: str, tag: str):
        """Create the batch, tagged. Not retried blindly (a creation whose answer was lost would be paid
        twice): after a retryable fault the batch is looked up by its tag, and created again only if it
        does not exist. If no batch was created, the upload is deleted before the error is raised."""
        import openai

        client = self.client.with_options(max_retries=0)
        for attempt in range(1, self.settings.batch_control_attempts + 1):
            try:
                return client.batches.create(
                    input_file_id=input_file_id, endpoint="/v1/chat/completions", completion_window="24h", metadata={BATCH_TAG: tag}
                )
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                if isinstance(exc, openai.APIStatusError) and not retryable_status(exc.status_code):
                    self._delete_upload(input_file_id)  # refused: no batch uses it
                    raise
                try:
                    found = self._find_batch(tag)
                except openai.APIError as lookup:
                    # Whether the batch exists is unknown: the upload stays recorded, and the next
                    # submission looks the batch up before creating one (or deletes the upload).
                    raise lookup from exc
                if found is not None:
                    self._log(f"creating a batch failed ({type(exc).__name__}) but batch {found.id} exists: reused")
                    return found
                if attempt == self.settings.batch_control_attempts:
                    self._delete_upload(input_file_id)
                    raise
                wait = retry_after_seconds(exc.response.headers) if isinstance(exc, openai.APIStatusError) else None
                delay = wait if wait is not None else self.settings.backoff_s * 2 ** (attempt - 1) * random.uniform(0.8, 1.2)
                self._sleep(min(delay, self.settings.max_backoff_s))
        raise AssertionError("unreachable")

    def _delete_unused_uploads(self) -> None:
        for file_id in self.cache.unused_uploads(self.labeler):
            self._delete_upload(file_id)

    def _delete_upload(self, file_id: str) -> None:
        """Delete an input file no batch uses; if that fails it stays recorded and is tried again next time."""
        import openai

        try:
            self.control.files.delete(file_id)
        except openai.NotFoundError:
            pass
        except openai.APIError as exc:
            self._log(f"could not delete unused upload {file_id} ({type(exc).__name__}); tried again at the next submission")
            return
        self.cache.forget_upload(file_id)

    def judge_by_batch(self, items: list[Item], *, poll_s: float = 10.0, max_wait_s: float = 600.0) -> RunReport:
        """Judge `items` through the Batch API: resume the open batch or submit one, then collect it.

        An open batch left by a run over other benchmarks is collected first (its results are
        cached for those prompts: they were paid for), then this run's own uncached prompts go in
        a new batch. Raises BatchStillRunning if a batch has not ended within `max_wait_s`."""
        collected: list[RunReport] = []
        for _ in range(2):
            resumed = self.cache.open_batch(self.labeler) is not None
            submitted = self.submit_batch(items)
            if submitted is None:
                collected.append(self.judge(items))  # everything cached: no request is made
                break
            report = self.collect_batch(items, submitted[0], poll_s=poll_s, max_wait_s=max_wait_s)
            if report is None:
                raise BatchStillRunning(*submitted)
            collected.append(report)
            if not resumed or not self.pending(items)[0]:
                break
        final = collected[-1]
        for earlier in collected[:-1]:  # what the resumed batch cost is this run's spend too
            final.requests += earlier.requests
            final.prompt_tokens += earlier.prompt_tokens
            final.completion_tokens += earlier.completion_tokens
            final.cost_usd += earlier.cost_usd
            final.rejected_ids += earlier.rejected_ids
            final.out_of_candidates += earlier.out_of_candidates
            final.other_prompts += earlier.other_prompts
        return final

    def collect_batch(self, items: list[Item], batch_id: str, *, poll_s: float = 10.0, max_wait_s: float = 600.0) -> RunReport | None:
        """Poll until the batch ends (None if still running after max_wait_s), then ingest by custom_id.

        Every result line is checked against its request's candidates and cached, including those
        of prompts that are not in `items` (a batch submitted by a run over other benchmarks)."""
        deadline = time.monotonic() + max_wait_s
        while True:
            batch = self.control.batches.retrieve(batch_id)
            self.cache.set_batch_status(batch_id, batch.status)
            if batch.status in ("completed", "failed", "expired", "cancelled"):
                break
            if time.monotonic() >= deadline:
                return None
            self._sleep(poll_s)
        by_id = {_custom_id(i): i for i in items}
        requested = self.cache.batch_requests(batch_id)
        report = RunReport()
        for file_id in (getattr(batch, "output_file_id", None), getattr(batch, "error_file_id", None)):
            if not file_id:
                continue
            text = self.control.files.content(file_id).text
            for line in text.splitlines():
                if not line.strip():
                    continue
                record = json.loads(line)
                custom_id = str(record.get("custom_id"))
                item = by_id.get(custom_id)
                candidate_ids = item.candidate_ids if item is not None else requested.get(custom_id)
                if candidate_ids is None or ":" not in custom_id:
                    self._log(f"batch {batch_id}: result for unknown request {custom_id!r} ignored")
                    continue
                key = item.key if item is not None else tuple(custom_id.split(":", 1))
                response = record.get("response") or {}
                body = response.get("body") or {}
                if response.get("status_code") != 200 or record.get("error"):
                    if item is not None:  # another run's failed prompt is simply asked again by that run
                        report.results[key] = Failure(f"batch error: {record.get('error') or response.get('status_code')}", 1)
                        report.failures += 1
                    continue
                usage = body.get("usage") or {}
                prompt_tokens, completion_tokens = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
                cost = self.settings.cost(prompt_tokens, completion_tokens, batch=True)
                report.requests += 1
                report.prompt_tokens += prompt_tokens
                report.completion_tokens += completion_tokens
                report.cost_usd += cost
                choices = body.get("choices") or []
                content = choices[0].get("message", {}).get("content") if choices else None
                try:
                    kept, rejected = parse_answer(content, candidate_ids, self.settings.max_labels)
                except MalformedAnswer as exc:
                    if item is not None:
                        report.results[key] = Failure(str(exc), 1)
                        report.failures += 1
                    continue
                report.rejected_ids += len(rejected)
                if rejected and not kept:  # not cached: the next run (sync or batch) asks again
                    if item is not None:
                        report.results[key] = OutOfCandidates(rejected, 1, 1)
                        report.out_of_candidates += 1
                    continue
                judgement = Judgement(kept, rejected, prompt_tokens, completion_tokens, cost, "batch")
                self.cache.put(self.labeler, key[0], key[1], judgement)
                if item is None:
                    report.other_prompts += 1
                else:
                    report.results[key] = judgement
        self.cache.set_batch_status(batch_id, "ingested" if batch.status == "completed" else batch.status)
        cached = self.cache.get_many(self.labeler, [i.key for i in items])
        for item in items:
            if item.key in cached and item.key not in report.results:
                report.results[item.key] = cached[item.key]
                report.from_cache += 1
        return report

