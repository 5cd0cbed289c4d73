"""What the LLM judge sends to a chat model and how it reads the answer: the prompt template, the
request, the answer's parsing, the outcomes of a prompt and of a run, and the transport's retry rules
(the client, which answers it retries, Retry-After). The judge's run loop is llm_judge.py; the Batch
API, llm_batch.py.

- One request per prompt: the prompt and its candidates (ID, statement, occupation), temperature 0,
  a JSON-schema response format; the answer is the list of task IDs in order of fit (= rank).
- Every API call (chat completions, file upload, batch creation, listing and polling, downloading
  results, deleting files) gets the same transport retry policy: the `openai` client's own, with
  `max_attempts - 1` retries: 408, 409, 429 and 5xx answers, time-outs and connection errors are
  retried, honouring Retry-After / retry-after-ms, else with exponential backoff. Other 4xx fail
  at once. The judge's own re-asking (llm_judge.py) is only for a malformed answer and for one whose
  IDs are all outside the candidates, with `backoff_s` between attempts.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import time
from dataclasses import dataclass, field

from .chat_model import LLMSettings
from .judgement_cache import Judgement, candidate_hash

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


class MalformedAnswer(ValueError):
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

