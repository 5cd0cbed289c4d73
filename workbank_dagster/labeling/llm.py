"""The LLM judge: a chat model, through the OpenAI API or any OpenAI-compatible server, picks which of a
prompt's retrieved candidate tasks the prompt exercises (docs/method.md §3, the article's method).

- One request per prompt: the prompt and its candidates (ID, statement, occupation), temperature 0,
  a JSON-schema response format; the answer is the list of task IDs in order of fit (= rank).
- IDs outside the candidates are dropped and counted. A malformed or empty answer is asked again,
  then recorded as a failure. An answer whose IDs are all outside the candidates is asked again
  once; if the second one is too, it is recorded as `out_of_candidates` (not cached: a re-run asks
  again). An empty list is the model choosing none (`no_match`), a usable answer that is cached.
- Every API call (chat completions, file upload, batch creation, listing and polling, downloading
  results, deleting files) gets the same transport retry policy: the `openai` client's own, with
  `max_attempts - 1` retries: 408, 409, 429 and 5xx answers, time-outs and connection errors are
  retried, honouring Retry-After / retry-after-ms, else with exponential backoff. Other 4xx fail
  at once. The judge's own re-asking is only for the answers above (a malformed answer, one whose
  IDs are all outside the candidates), with `backoff_s` between attempts.
- Requests run concurrently up to a limit; every judgement is written to the judgement cache the
  moment it arrives. A failure budget stops the work (the asset then fails loudly, keeping what was
  done) and a spend cap stops new requests once the measured cost reaches it.
- Batch mode writes the same requests as JSONL, uploads them, creates a batch, polls it, and
  ingests the results by `custom_id`; an open batch is polled again on the next run, never resubmitted.
  Creating a batch is not idempotent, so each batch carries a tag (`metadata.workbank_request`, a
  hash of the labeler and its request keys): before creating a batch, and before trying a failed
  creation again, the batch is looked up by its tag and reused if it exists (a creation whose
  answer was lost is not paid for twice). An uploaded input file that no batch uses is deleted.
"""

from __future__ import annotations

import concurrent.futures
import email.utils
import hashlib
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .chat_model import LLMSettings
from .judgement_cache import Judgement, JudgementCache, candidate_hash

# t2: the sparse labeling rule (judge issue). t3 (#38): the benchmark's instruction, where it has one, is
# sent with the prompt. A new version means a new labeler string, so cached judgements of an earlier
# template (keyed by labeler) are never reused.
TEMPLATE_VERSION = "t3"
SYSTEM_PROMPT = (
    "You map AI benchmark prompts to the O*NET work tasks they exercise. A prompt exercises a task when a "
    "worker doing that task would do the work the prompt asks for: judge the activity the prompt asks for, "
    "not the subject matter of its text. Where the benchmark's own instruction is given (the text its harness "
    "wraps around every prompt), it says what work the benchmark asks for. Label sparingly: choose only the tasks "
    "the prompt actually exercises, usually one to three, from the one or two occupations that would most plausibly "
    "do this work. Do not add tasks that are merely related. A prompt in which the agent only acts as a customer or "
    "a private person for itself (buying, posting, changing its own account) exercises no worker's task: choose none. "
    "Choose only from the candidate tasks given, by their numeric IDs, best fit first. Choose at most {max_labels}; "
    "choose none if no candidate fits. Answer with JSON only."
)
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "task_labels",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"task_ids": {"type": "array", "items": {"type": "integer"}}},
            "required": ["task_ids"],
            "additionalProperties": False,
        },
    },
}
EXPECTED_COMPLETION_TOKENS = 40
BATCH_TAG = "workbank_request"  # the metadata key a batch is tagged with at creation
BATCH_LOOKUP_LIMIT = 500  # most recent batches searched for a tag (the API lists newest first)
CLOSED_BATCH = ("failed", "expired", "cancelling", "cancelled")  # a batch found by its tag in these states is not reused


class MalformedAnswer(ValueError):
    pass


class BatchStillRunning(Exception):
    def __init__(self, batch_id: str, n_requests: int) -> None:
        super().__init__(f"batch {batch_id} ({n_requests} requests) is still running; materialize again to collect it")
        self.batch_id, self.n_requests = batch_id, n_requests


class BatchOverSpendCap(Exception):
    pass


@dataclass(frozen=True)
class Item:
    """One prompt to judge with its candidates: (task_id, statement, occupation title), in order."""

    prompt_hash: str
    prompt: str
    candidates: tuple[tuple[int, str, str], ...]
    instruction: str | None = None  # the benchmark's instruction text (sources/instructions.py), if it has one

    @property
    def candidate_ids(self) -> list[int]:
        return [c[0] for c in self.candidates]

    @property
    def key(self) -> tuple[str, str]:
        """(what is judged, the candidates): the prompt's hash, or, with an instruction, the hash of both,
        so a changed instruction is judged again and an unchanged one never paid for twice."""
        judged = self.prompt_hash if self.instruction is None else hashlib.sha256(f"{self.prompt_hash}\x1e{self.instruction}".encode()).hexdigest()
        return (judged, candidate_hash(self.candidate_ids))


@dataclass
class Failure:
    reason: str
    attempts: int


@dataclass
class OutOfCandidates:
    """The model answered only IDs that are not among the prompt's candidates, each time it was asked
    (twice in sync mode). Not a judgement: it is not cached, so a re-run asks again; it is recorded
    with status `out_of_candidates`, not as the model choosing none (`no_match`)."""

    rejected_ids: list[int]  # the last answer's
    answers: int
    attempts: int

    @property
    def reason(self) -> str:
        return f"{len(self.rejected_ids)} id(s), all outside the candidates ({self.answers} answer(s))"


@dataclass
class RunReport:
    results: dict[tuple[str, str], Judgement | Failure] = field(default_factory=dict)
    from_cache: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    rejected_ids: int = 0  # IDs dropped, over every answer received
    failures: int = 0
    out_of_candidates: int = 0  # prompts whose answers named only IDs outside the candidates
    stopped: str | None = None  # why the run stopped early, if it did
    other_prompts: int = 0  # batch results for prompts outside this run, cached for the runs that need them

    def metadata(self) -> dict:
        return {
            "from_cache": self.from_cache,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "rejected_ids": self.rejected_ids,
            "failures": self.failures,
            "out_of_candidates": self.out_of_candidates,
            "stopped": self.stopped or "",
            "batch_results_for_other_prompts": self.other_prompts,
        }


def build_request(item: Item, settings: LLMSettings) -> dict:
    listing = "\n".join(f"{task_id}: {statement} ({title})" for task_id, statement, title in item.candidates)
    told = f"The benchmark's instruction, wrapped around every prompt:\n<<<\n{item.instruction}\n>>>\n\n" if item.instruction else ""
    return {
        "model": settings.model,
        "temperature": settings.temperature,
        "response_format": RESPONSE_FORMAT,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT.format(max_labels=settings.max_labels)},
            {"role": "user", "content": told + f"Prompt:\n<<<\n{item.prompt}\n>>>\n\nCandidate tasks (ID: statement (occupation)):\n{listing}"},
        ],
    }


def estimate_prompt_tokens(body: dict) -> int:
    """About 4 characters per token for English, plus the message overhead."""
    return sum(len(m["content"]) for m in body["messages"]) // 4 + 12


def parse_answer(content: str | None, candidate_ids: list[int], max_labels: int) -> tuple[list[int], list[int]]:
    """Task IDs in the model's order, kept if they are candidates; the others returned as rejected."""
    if content is None or not content.strip():
        raise MalformedAnswer("empty answer")
    try:
        payload = json.loads(content)
    except json.JSONDecodeError as exc:
        raise MalformedAnswer(f"answer is not JSON ({exc.msg})") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("task_ids"), list):
        raise MalformedAnswer("answer has no task_ids list")
    allowed = set(candidate_ids)
    kept: list[int] = []
    rejected: list[int] = []
    for value in payload["task_ids"]:
        if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().lstrip("-").isdigit():
            rejected.append(-1)
            continue
        task_id = int(value)
        if task_id in allowed and task_id not in kept:
            kept.append(task_id)
        elif task_id not in allowed:
            rejected.append(task_id)
    return kept[:max_labels], rejected


def retryable_status(status_code: int) -> bool:
    """The statuses the openai client retries (`_should_retry` in openai/_base_client.py)."""
    return status_code in (408, 409, 429) or status_code >= 500


def requests_made(exc: Exception) -> int:
    """HTTP requests behind an API error: the client sends its retry count in `x-stainless-retry-count`."""
    try:
        response = getattr(exc, "response", None)
        request = response.request if response is not None else exc.request
        return int(request.headers.get("x-stainless-retry-count", "0")) + 1
    except (AttributeError, RuntimeError, TypeError, ValueError):
        return 1


def request_tag(labeler: str, custom_ids) -> str:
    """A batch's deterministic tag: the same labeler and requests give the same tag."""
    return hashlib.sha256("\n".join([labeler, *sorted(custom_ids)]).encode()).hexdigest()


def retry_after_seconds(headers) -> float | None:
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) * scale, 0.0)
        except ValueError:
            try:
                return max(email.utils.parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
            except (TypeError, ValueError):
                return None
    return None


def make_client(settings: LLMSettings, api_key: str | None):
    import openai

    if not api_key:
        raise RuntimeError("the LLM judge needs an API key (the chat_model resource's api_key, $OPENAI_API_KEY by default)")
    # Every call is retried by the client (Retry-After, backoff); the judge only asks again after a bad answer.
    return openai.OpenAI(api_key=api_key, base_url=settings.base_url, max_retries=max(settings.max_attempts - 1, 0), timeout=settings.timeout_s)


class LLMJudge:
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

    @property
    def control(self):
        """The client for Batch control calls: `batch_control_attempts` attempts each."""
        return self.client.with_options(max_retries=max(self.settings.batch_control_attempts - 1, 0))

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

    # --- Batch API ------------------------------------------------------------------------------
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


def _custom_id(item: Item) -> str:
    return f"{item.key[0]}:{item.key[1]}"
