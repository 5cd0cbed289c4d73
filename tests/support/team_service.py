"""What a test needs to drive the team instance (`cli team ui`) from outside: free ports on
127.0.0.1, the webserver's GraphQL endpoint, and the processes still alive that name a folder or a
port (none may be left once the instance is stopped)."""

from __future__ import annotations

import json
import os
import socket
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def graphql(port: int, query: str, variables: dict | None = None, timeout: float = 120) -> dict:
    """POST one query or mutation to the webserver's /graphql; its `data` (GraphQL errors raise)."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = json.loads(response.read())
    if body.get("errors"):
        raise AssertionError(f"GraphQL errors: {body['errors']}")
    return body["data"]


def webserver_up(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def processes_naming(*needles: str) -> list[str]:
    """Live (not zombie) processes but this one whose command line contains one of `needles`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and any(needle in cmdline for needle in needles):
            found.append(f"{entry.name}: {cmdline[:160]}")
    return found
