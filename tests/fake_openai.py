"""A real HTTP server on 127.0.0.1 that speaks the parts of the OpenAI API the LLM judge uses:
chat completions, files and batches. Deterministic answers, a request counter, and faults chosen by
markers in the prompt text, so that concurrency cannot change which request gets which fault:

    [[fault:429*2]]      the first 2 requests for this prompt get 429 with Retry-After
    [[fault:500*1]]      the first request gets 500
    [[fault:timeout*1]]  the first request is answered after the client's time-out
    [[fault:malformed*1]] the first answer is not JSON
    [[fault:empty*9]]    the first 9 answers are empty (i.e. always, with 5 attempts)
    [[fault:outside]]    the answer names IDs that are not among the candidates (and one that is)
    [[fault:http400]]    400 Bad Request, every time

The answer to a clean prompt is the first two candidate IDs listed in the request.
"""

from __future__ import annotations

import collections
import http.server
import json
import re
import threading
import time
import uuid

FAULT = re.compile(r"\[\[fault:(\w+)(?:\*(\d+))?\]\]")
CANDIDATE_LINE = re.compile(r"^(\d+): ", re.MULTILINE)


class FakeOpenAI:
    def __init__(self, *, timeout_sleep: float = 2.0, retry_after: str = "0.05", batch_polls_until_done: int = 2) -> None:
        self.timeout_sleep = timeout_sleep
        self.retry_after = retry_after
        self.batch_polls_until_done = batch_polls_until_done
        self.lock = threading.Lock()
        self.counts: collections.Counter = collections.Counter()  # by endpoint
        self.attempts: collections.Counter = collections.Counter()  # by prompt
        self.auth_headers: list[str] = []
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
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

            def do_POST(self):
                body = self._body()
                with server.lock:
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                if self.path.endswith("/chat/completions"):
                    with server.lock:
                        server.counts["chat"] += 1
                    status, payload, headers, delay = server.chat(json.loads(body))
                    if delay:
                        time.sleep(delay)
                    self._send(status, payload, headers)
                elif self.path.endswith("/files"):
                    with server.lock:
                        server.counts["files"] += 1
                    self._send(200, server.upload(body, self.headers.get("Content-Type", "")))
                elif self.path.endswith("/batches"):
                    with server.lock:
                        server.counts["batches"] += 1
                    self._send(200, server.create_batch(json.loads(body)))
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_GET(self):
                match = re.search(r"/batches/([\w-]+)$", self.path)
                if match:
                    with server.lock:
                        server.counts["batch_poll"] += 1
                    self._send(200, server.poll_batch(match.group(1)))
                    return
                match = re.search(r"/files/([\w-]+)/content$", self.path)
                if match:
                    self._send(200, None, raw=server.files[match.group(1)])
                    return
                self._send(404, {"error": {"message": f"no route {self.path}"}})

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

    # --- behaviour --------------------------------------------------------------------------
    @staticmethod
    def _user_text(request: dict) -> str:
        return next(m["content"] for m in request["messages"] if m["role"] == "user")

    def answer(self, request: dict) -> tuple[str, dict]:
        text = self._user_text(request)
        ids = [int(x) for x in CANDIDATE_LINE.findall(text.split("Candidate tasks", 1)[-1])]
        chosen = ids[:2]
        if "[[fault:outside]]" in text:
            chosen = [999_999_999, *ids[:1], 888_888_888]
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
        return {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()), "filename": "requests.jsonl", "purpose": "batch", "status": "processed"}

    def create_batch(self, request: dict) -> dict:
        batch_id = f"batch_{uuid.uuid4().hex[:12]}"
        self.batches[batch_id] = {"input_file_id": request["input_file_id"], "polls": 0, "status": "validating", "output_file_id": None}
        return self._batch(batch_id)

    def _batch(self, batch_id: str) -> dict:
        b = self.batches[batch_id]
        return {
            "id": batch_id, "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": b["input_file_id"],
            "completion_window": "24h", "status": b["status"], "created_at": int(time.time()),
            "output_file_id": b["output_file_id"], "error_file_id": None,
        }

    def poll_batch(self, batch_id: str) -> dict:
        b = self.batches[batch_id]
        b["polls"] += 1
        if b["status"] != "completed":
            b["status"] = "in_progress"
            if b["polls"] >= self.batch_polls_until_done:
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
