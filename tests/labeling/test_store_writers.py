"""The judgement cache and the embedding store take several writer processes at once without losing
a write: 4 processes start together on a store none of them has created, each makes 1,000 writes
committed one by one, and every row is there afterwards, with no write failed as "locked".

Several partition runs label side by side (one backfill per benchmark, issue "Past one machine"):
each writes the same SQLite stores from its own process."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

WRITER = Path(__file__).resolve().parents[1] / "support" / "store_writer.py"
PROCESSES, WRITES = 4, 1_000


def _run_writers(kind: str, path: Path) -> list[dict]:
    start_at = time.time() + 3.0  # every process imported and waiting by then
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen([sys.executable, str(WRITER), kind, str(path), str(w), str(WRITES), str(start_at)], stdout=subprocess.PIPE, text=True, env=env)
        for w in range(PROCESSES)
    ]
    reports = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, out
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


@pytest.mark.parametrize(("kind", "table"), [("judgements", "judgements"), ("embeddings", "embeddings")])
def test_four_writer_processes_lose_no_write(tmp_path, kind, table):
    path = tmp_path / "store.sqlite"
    reports = _run_writers(kind, path)
    assert [r["errors"] for r in reports] == [[]] * PROCESSES
    assert [r["written"] for r in reports] == [WRITES] * PROCESSES
    with sqlite3.connect(path) as con:
        rows = con.execute(f"select count(*) from {table}").fetchone()[0]
        key = "prompt_hash" if kind == "judgements" else "text_sha256"
        per_worker = dict(con.execute(f"select substr({key}, 1, instr({key}, '-') - 1), count(*) from {table} group by 1").fetchall())
    assert rows == PROCESSES * WRITES
    assert per_worker == {f"w{w}": WRITES for w in range(PROCESSES)}
