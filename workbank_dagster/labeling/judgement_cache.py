"""The judgement cache: every judgement a judge paid for, keyed by (labeler, prompt hash, candidate hash).

A store of its own (SQLite in WAL mode, outside the DuckDB warehouse), written as each judgement
arrives and committed at once: a crash loses nothing paid for, a re-run pays for nothing twice, and
a changed benchmark file re-judges only the prompts whose text (or candidates) changed. Only
successful judgements are stored; a failed one, or an answer whose IDs were all outside the
candidates, is tried again next run.

Batch API bookkeeping lives here too: every batch with the tag it was created with (its
`workbank_request` metadata, so a batch whose creation answer was lost can be found and reused),
the candidates of each of its requests, and every uploaded input file until a batch uses it (an
upload no batch uses is deleted by the next submission).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from ..common import wal_connection


def candidate_hash(task_ids) -> str:
    """Order matters to a chat model (candidates are listed in this order), so it is hashed as is."""
    return hashlib.sha256(",".join(str(int(t)) for t in task_ids).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Judgement:
    task_ids: list[int]
    rejected_ids: list[int]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    source: str  # "sync" | "batch"


class JudgementCache:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connect() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS judgements (labeler TEXT NOT NULL, prompt_hash TEXT NOT NULL, candidate_hash TEXT NOT NULL, "
                "answer TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (labeler, prompt_hash, candidate_hash))"
            )
            con.execute(
                "CREATE TABLE IF NOT EXISTS batches (labeler TEXT NOT NULL, batch_id TEXT PRIMARY KEY, input_file_id TEXT, status TEXT NOT NULL, "
                "n_requests INTEGER NOT NULL, created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, request_tag TEXT)"
            )
            # Caches written before batches were tagged: add the column (NULL for their batches).
            columns = {row[1] for row in con.execute("PRAGMA table_info(batches)").fetchall()}
            if "request_tag" not in columns:
                con.execute("ALTER TABLE batches ADD COLUMN request_tag TEXT")
            # The candidates of every request in a batch: its results can be checked and cached
            # even when they are collected by a run over other benchmarks.
            con.execute(
                "CREATE TABLE IF NOT EXISTS batch_requests (batch_id TEXT NOT NULL, custom_id TEXT NOT NULL, "
                "candidate_ids TEXT NOT NULL, PRIMARY KEY (batch_id, custom_id))"
            )
            # Input files uploaded for a batch, recorded before the batch is created: one that no
            # batch uses (its creation failed) is deleted by the next submission.
            con.execute(
                "CREATE TABLE IF NOT EXISTS batch_uploads (labeler TEXT NOT NULL, file_id TEXT PRIMARY KEY, request_tag TEXT NOT NULL, "
                "created_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
            )

    def _connect(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = wal_connection(self.path, synchronous="FULL", isolation_level=None)
            self._local.con = con
        return con

    def get_many(self, labeler: str, keys: list[tuple[str, str]]) -> dict[tuple[str, str], Judgement]:
        con = self._connect()
        found = {}
        for prompt_hash, cand in keys:
            row = con.execute(
                "SELECT answer FROM judgements WHERE labeler = ? AND prompt_hash = ? AND candidate_hash = ?", (labeler, prompt_hash, cand)
            ).fetchone()
            if row:
                found[(prompt_hash, cand)] = Judgement(**json.loads(row[0]))
        return found

    def put(self, labeler: str, prompt_hash: str, cand: str, judgement: Judgement) -> None:
        self._connect().execute(
            "INSERT OR REPLACE INTO judgements (labeler, prompt_hash, candidate_hash, answer) VALUES (?, ?, ?, ?)",
            (labeler, prompt_hash, cand, json.dumps(judgement.__dict__)),
        )

    def count(self, labeler: str | None = None) -> int:
        sql = "SELECT count(*) FROM judgements" + (" WHERE labeler = ?" if labeler else "")
        return self._connect().execute(sql, (labeler,) if labeler else ()).fetchone()[0]

    # Batch API bookkeeping: an open batch is polled, not submitted again.
    def open_batch(self, labeler: str) -> tuple[str, int] | None:
        row = self._connect().execute(
            "SELECT batch_id, n_requests FROM batches WHERE labeler = ? AND status NOT IN ('ingested', 'failed', 'expired', 'cancelled') "
            "ORDER BY created_at DESC LIMIT 1",
            (labeler,),
        ).fetchone()
        return (row[0], row[1]) if row else None

    def record_batch(
        self, labeler: str, batch_id: str, input_file_id: str, status: str, requests: dict[str, list[int]], request_tag: str | None = None
    ) -> None:
        """The batch, its tag and the candidates of each of its requests (custom_id → ids), in one transaction."""
        con = self._connect()
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute(
                "INSERT OR REPLACE INTO batches (labeler, batch_id, input_file_id, status, n_requests, request_tag) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (labeler, batch_id, input_file_id, status, len(requests), request_tag),
            )
            con.executemany(
                "INSERT OR REPLACE INTO batch_requests (batch_id, custom_id, candidate_ids) VALUES (?, ?, ?)",
                [(batch_id, custom_id, json.dumps(ids)) for custom_id, ids in requests.items()],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def batch_requests(self, batch_id: str) -> dict[str, list[int]]:
        rows = self._connect().execute("SELECT custom_id, candidate_ids FROM batch_requests WHERE batch_id = ?", (batch_id,)).fetchall()
        return {custom_id: json.loads(ids) for custom_id, ids in rows}

    def set_batch_status(self, batch_id: str, status: str) -> None:
        self._connect().execute("UPDATE batches SET status = ? WHERE batch_id = ?", (status, batch_id))

    def has_batch(self, batch_id: str) -> bool:
        return self._connect().execute("SELECT 1 FROM batches WHERE batch_id = ?", (batch_id,)).fetchone() is not None

    def batch_tag(self, batch_id: str) -> str | None:
        row = self._connect().execute("SELECT request_tag FROM batches WHERE batch_id = ?", (batch_id,)).fetchone()
        return row[0] if row else None

    def record_upload(self, labeler: str, file_id: str, request_tag: str) -> None:
        self._connect().execute(
            "INSERT OR REPLACE INTO batch_uploads (labeler, file_id, request_tag) VALUES (?, ?, ?)", (labeler, file_id, request_tag)
        )

    def unused_uploads(self, labeler: str) -> list[str]:
        """Uploaded input files that no recorded batch uses (their batch creation failed), oldest first."""
        rows = self._connect().execute(
            "SELECT file_id FROM batch_uploads u WHERE labeler = ? "
            "AND NOT EXISTS (SELECT 1 FROM batches b WHERE b.input_file_id = u.file_id) ORDER BY created_at, file_id",
            (labeler,),
        ).fetchall()
        return [row[0] for row in rows]

    def forget_upload(self, file_id: str) -> None:
        self._connect().execute("DELETE FROM batch_uploads WHERE file_id = ?", (file_id,))
