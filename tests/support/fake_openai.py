"""A real HTTP server on 127.0.0.1 that speaks the parts of the OpenAI API the LLM judge uses:
chat completions, files (upload, content, delete) and batches (create, retrieve, list with
metadata). Deterministic answers, request counters, and two kinds of injected faults.

Faults chosen by markers in the prompt text, so that concurrency cannot change which request gets
which fault (chat completions only):

    [[fault:429*2]]      the first 2 requests for this prompt get 429 with Retry-After
    [[fault:500*1]]      the first request gets 500 (no Retry-After: the client's own backoff)
    [[fault:timeout*1]]  the first request is answered after the client's time-out
    [[fault:malformed*1]] the first answer is not JSON
    [[fault:empty*9]]    the first 9 answers are empty (i.e. always, with 5 attempts)
    [[fault:outside]]    the answer names IDs that are not among the candidates (and one that is)
    [[fault:alloutside*1]] the first answer names 3 IDs, all outside the candidates (no count: always)
    [[fault:none]]       the answer is an empty list: the model chose none of the candidates
    [[fault:http400]]    400 Bad Request, every time

Faults by endpoint (`chat`, `files` = upload, `batches` = create, `batch_list`, `batch_poll`,
`file_content`, `file_delete`), for every endpoint including the files and batches ones:

- `scripts={"batches": ["lost", "ok"]}`: the endpoint's next requests, in order: `ok`, an HTTP
  status (`429`, `500`, `400`, ...), `lost` (the request is carried out, then answered 500: a
  creation whose answer was lost) or `timeout` (carried out, then answered after the client's
  time-out). Once a script is used up the endpoint behaves normally (or by the rates below).
- `fault_rates={429: 0.3, 500: 0.1}`: each request is answered with that status with that
  probability, drawn from a RNG seeded by (seed, endpoint, the endpoint's request number), so a
  serial client always meets the same faults.

Injected 429 and 5xx answers carry `Retry-After: retry_after` (0.05 s), so a client's retries are
quick. The answer to a clean prompt is the first two candidate IDs listed in the request.
"""

from __future__ import annotations

import collections
import http.server
import json
import random
import re
import threading
import time
import urllib.parse
import uuid

FAULT = re.compile(r"\[\[fault:(\w+)(?:\*(\d+))?\]\]")
ALL_OUTSIDE = re.compile(r"\[\[fault:alloutside(?:\*(\d+))?\]\]")
CANDIDATE_LINE = re.compile(r"^(\d+): ", re.MULTILINE)
OUTSIDE_IDS = [999_999_999, 888_888_888, 777_777_777]
ROUTES = (
    ("POST", re.compile(r"/chat/completions$"), "chat"),
    ("POST", re.compile(r"/files$"), "files"),
    ("POST", re.compile(r"/batches$"), "batches"),
    ("GET", re.compile(r"/batches$"), "batch_list"),
    ("GET", re.compile(r"/batches/([\w-]+)$"), "batch_poll"),
    ("GET", re.compile(r"/files/([\w-]+)/content$"), "file_content"),
    ("DELETE", re.compile(r"/files/([\w-]+)$"), "file_delete"),
)


class FakeOpenAI:
    def __init__(
        self,
        *,
        timeout_sleep: float = 2.0,
        retry_after: str = "0.05",
        batch_polls_until_done: int = 2,
        fault_rates: dict[int, float] | None = None,
        seed: int = 0,
        scripts: dict[str, list[str]] | None = None,
    ) -> None:
        self.timeout_sleep = timeout_sleep
        self.retry_after = retry_after
        self.batch_polls_until_done = batch_polls_until_done
        self.fault_rates = dict(fault_rates or {})
        self.seed = seed
        self.scripts = {endpoint: list(kinds) for endpoint, kinds in (scripts or {}).items()}
        self.lock = threading.Lock()
        self.counts: collections.Counter = collections.Counter()  # requests, by endpoint
        self.injected: collections.Counter = collections.Counter()  # endpoint faults injected, by endpoint
        self.attempts: collections.Counter = collections.Counter()  # by prompt
        self.auth_headers: list[str] = []
        self.files: dict[str, bytes] = {}
        self.uploads: list[str] = []  # IDs of the files uploaded (not the output files), in order
        self.deleted: list[str] = []
        self.batches: dict[str, dict] = {}  # every batch created, in order
        self.chat_bodies: list[dict] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status: int, payload, headers: dict | None = None, raw: bytes | None = None):
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if raw is None else "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _body(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length)

            def _handle(self, method: str):
                body = self._body()
                url = urllib.parse.urlsplit(self.path)
                for route_method, pattern, endpoint in ROUTES:  # noqa: B007 (the matching route's endpoint is used after the loop)
                    match = pattern.search(url.path) if route_method == method else None
                    if match:
                        break
                else:
                    self._send(404, {"error": {"message": f"no route {method} {self.path}"}})
                    return
                with server.lock:
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                    server.counts[endpoint] += 1
                    fault = server.endpoint_fault(endpoint)
                if fault not in (None, "lost", "timeout"):
                    status = int(fault)
                    headers = {"Retry-After": server.retry_after} if status == 429 or status >= 500 else {}
                    self._send(status, {"error": {"message": f"injected {status}", "type": "injected"}}, headers)
                    return
                arg = match.group(1) if match.groups() else None
                status, payload, headers, delay, raw = server.dispatch(endpoint, arg, body, urllib.parse.parse_qs(url.query), self.headers)
                if fault == "lost":  # carried out, but the client never learns it
                    lost = {"error": {"message": "injected 500 after the request was carried out"}}
                    self._send(500, lost, {"Retry-After": server.retry_after})
                    return
                if fault == "timeout":
                    delay = max(delay, server.timeout_sleep)
                if delay:
                    time.sleep(delay)
                self._send(status, payload, headers, raw)

            def do_POST(self):
                self._handle("POST")

            def do_GET(self):
                self._handle("GET")

            def do_DELETE(self):
                self._handle("DELETE")

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    # --- lifecycle --------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- faults -----------------------------------------------------------------------------
    def endpoint_fault(self, endpoint: str) -> str | None:
        """The fault for the endpoint's current request (called under the lock), or None."""
        script = self.scripts.get(endpoint)
        if script:
            kind = script.pop(0)
            fault = None if kind == "ok" else kind
        else:
            fault = None
            draw = random.Random(f"{self.seed}:{endpoint}:{self.counts[endpoint]}").random()
            edge = 0.0
            for status, rate in sorted(self.fault_rates.items()):
                edge += rate
                if draw < edge:
                    fault = str(status)
                    break
        if fault is not None:
            self.injected[endpoint] += 1
        return fault

    def leftover_uploads(self) -> list[str]:
        """Uploaded files that are neither deleted nor the input of a batch."""
        used = {b["input_file_id"] for b in self.batches.values()}
        return [f for f in self.uploads if f not in self.deleted and f not in used]

    # --- behaviour --------------------------------------------------------------------------
    def dispatch(self, endpoint: str, arg: str | None, body: bytes, query: dict, headers) -> tuple[int, object, dict, float, bytes | None]:
        """(status, payload, headers, delay, raw body) for a request that gets no injected fault."""
        if endpoint == "chat":
            status, payload, extra, delay = self.chat(json.loads(body))
            return status, payload, extra, delay, None
        with self.lock:
            if endpoint == "files":
                return 200, self.upload(body, headers.get("Content-Type", "")), {}, 0, None
            if endpoint == "batches":
                return 200, self.create_batch(json.loads(body)), {}, 0, None
            if endpoint == "batch_list":
                return 200, self.list_batches(query), {}, 0, None
            if endpoint == "batch_poll":
                if arg not in self.batches:
                    return 404, {"error": {"message": f"no batch {arg}"}}, {}, 0, None
                return 200, self.poll_batch(arg), {}, 0, None
            if arg not in self.files:
                return 404, {"error": {"message": f"No such File object: {arg}"}}, {}, 0, None
            if endpoint == "file_content":
                return 200, None, {}, 0, self.files[arg]
            del self.files[arg]
            self.deleted.append(arg)
            return 200, {"id": arg, "object": "file", "deleted": True}, {}, 0, None

    @staticmethod
    def _user_text(request: dict) -> str:
        return next(m["content"] for m in request["messages"] if m["role"] == "user")

    def answer(self, request: dict) -> tuple[str, dict]:
        text = self._user_text(request)
        ids = [int(x) for x in CANDIDATE_LINE.findall(text.split("Candidate tasks", 1)[-1])]
        chosen = ids[:2]
        if "[[fault:outside]]" in text:
            chosen = [999_999_999, *ids[:1], 888_888_888]
        if "[[fault:none]]" in text:
            chosen = []
        all_outside = ALL_OUTSIDE.search(text)
        if all_outside and (all_outside.group(1) is None or self.attempts[text] <= int(all_outside.group(1))):
            chosen = list(OUTSIDE_IDS)  # batch answers count as a first attempt
        content = json.dumps({"task_ids": chosen})
        return content, {"prompt_tokens": sum(len(m["content"]) for m in request["messages"]) // 4, "completion_tokens": len(content) // 4}

    @staticmethod
    def completion(request: dict, content: str | None, usage: dict) -> dict:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
        }

    def chat(self, request: dict):
        text = self._user_text(request)
        with self.lock:
            self.chat_bodies.append(request)
            self.attempts[text] += 1
            attempt = self.attempts[text]
        content, usage = self.answer(request)
        for kind, count in FAULT.findall(text):
            limit = int(count) if count else 10**9
            if attempt > limit:
                continue
            if kind == "429":
                return 429, {"error": {"message": "rate limited", "type": "rate_limit"}}, {"Retry-After": self.retry_after}, 0
            if kind == "500":
                return 500, {"error": {"message": "server error"}}, {}, 0
            if kind == "http400":
                return 400, {"error": {"message": "bad request"}}, {}, 0
            if kind == "timeout":
                return 200, self.completion(request, content, usage), {}, self.timeout_sleep
            if kind == "malformed":
                return 200, self.completion(request, "{not json", usage), {}, 0
            if kind == "empty":
                return 200, self.completion(request, "", usage), {}, 0
        return 200, self.completion(request, content, usage), {}, 0

    def upload(self, body: bytes, content_type: str) -> dict:
        boundary = content_type.split("boundary=")[-1].encode()
        content = b""
        for part in body.split(b"--" + boundary):
            if b'name="file"' in part:
                content = part.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
        file_id = f"file-{uuid.uuid4().hex[:12]}"
        self.files[file_id] = content
        self.uploads.append(file_id)
        return {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()), "filename": "requests.jsonl", "purpose": "batch", "status": "processed"}

    def create_batch(self, request: dict) -> dict:
        batch_id = f"batch_{uuid.uuid4().hex[:12]}"
        self.batches[batch_id] = {
            "input_file_id": request["input_file_id"], "polls": 0, "status": "validating", "output_file_id": None,
            "metadata": request.get("metadata"), "created_at": int(time.time()),
        }
        return self._batch(batch_id)

    def list_batches(self, query: dict) -> dict:
        """Newest first, `limit` per page, after the batch named by `after` (the API's cursor)."""
        limit = int(query.get("limit", ["20"])[0])
        ids = list(reversed(self.batches))
        after = query.get("after", [None])[0]
        if after in ids:
            ids = ids[ids.index(after) + 1 :]
        page = ids[:limit]
        return {
            "object": "list", "data": [self._batch(i) for i in page], "first_id": page[0] if page else None,
            "last_id": page[-1] if page else None, "has_more": len(ids) > limit,
        }

    def _batch(self, batch_id: str) -> dict:
        b = self.batches[batch_id]
        return {
            "id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": b["input_file_id"],
            "completion_window": "24h", "status": b["status"], "created_at": b["created_at"],
            "output_file_id": b["output_file_id"], "error_file_id": None, "metadata": b["metadata"],
        }

    def poll_batch(self, batch_id: str) -> dict:
        b = self.batches[batch_id]
        b["polls"] += 1
        if b["status"] not in ("completed", "failed"):
            b["status"] = "in_progress"
            if b["input_file_id"] not in self.files:  # its input was deleted
                b["status"] = "failed"
            elif b["polls"] >= self.batch_polls_until_done:
                lines = []
                for line in self.files[b["input_file_id"]].decode().splitlines():
                    if not line.strip():
                        continue
                    record = json.loads(line)
                    content, usage = self.answer(record["body"])
                    if "[[fault:malformed" in self._user_text(record["body"]):
                        content = "{not json"
                    lines.append(json.dumps({"id": f"req-{uuid.uuid4().hex[:8]}", "custom_id": record["custom_id"], "response": {"status_code": 200, "body": self.completion(record["body"], content, usage)}, "error": None}))
                output_id = f"file-{uuid.uuid4().hex[:12]}"
                self.files[output_id] = ("\n".join(lines) + "\n").encode()
                b["output_file_id"] = output_id
                b["status"] = "completed"
        return self._batch(batch_id)
