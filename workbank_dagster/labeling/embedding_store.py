"""A content-addressed store of embeddings (SQLite, outside the warehouse).

Key: (model, SHA-256 of the text). A text is embedded once, ever; a warm run reads vectors back
and never loads the model. Writes are committed per batch, so an interrupted run keeps what it did.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..common import text_sha256, wal_connection
from .embedder import DIMENSION


class EmbeddingStore:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as con:
            con.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, text_sha256 TEXT NOT NULL, vector BLOB NOT NULL, "
                "PRIMARY KEY (model, text_sha256))"
            )
        self.hits = 0
        self.misses = 0

    def _connect(self) -> sqlite3.Connection:
        return wal_connection(self.path, synchronous="NORMAL")

    def get(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._connect() as con:
            for start in range(0, len(unique), 900):
                batch = unique[start : start + 900]
                rows = con.execute(
                    f"SELECT text_sha256, vector FROM embeddings WHERE model = ? AND text_sha256 IN ({','.join('?' * len(batch))})",
                    [model, *batch],
                ).fetchall()
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put(self, model: str, keys: Sequence[str], vectors: np.ndarray) -> None:
        with self._connect() as con:
            con.executemany(
                "INSERT OR REPLACE INTO embeddings (model, text_sha256, vector) VALUES (?, ?, ?)",
                [(model, key, np.ascontiguousarray(vec, dtype=np.float32).tobytes()) for key, vec in zip(keys, vectors)],
            )

    def embed(
        self,
        model: str,
        texts: Sequence[str],
        encode: Callable[[list[str]], np.ndarray],
        *,
        batch: int = 512,
        progress: Callable[[str, int], object] | None = None,
    ) -> np.ndarray:
        """Vectors for `texts` in order: cached ones read back, the rest encoded and stored batch by batch.

        `progress(what, total)` makes a progress.Progress for the texts that must be encoded."""
        keys = [text_sha256(t) for t in texts]
        cached = self.get(model, keys)
        missing = list(dict.fromkeys(k for k in keys if k not in cached))
        self.hits += len(keys) - sum(1 for k in keys if k not in cached)
        self.misses += len(missing)
        if missing:
            text_by_key = {k: t for k, t in zip(keys, texts)}
            # Shortest first: a batch then holds texts of few token counts, so the embedder's
            # batches (one token count each) are full. A vector does not depend on its batch.
            missing.sort(key=lambda k: len(text_by_key[k]))
            meter = progress(f"embedding with {model}", len(missing), "texts") if progress is not None else None
            try:
                for start in range(0, len(missing), batch):
                    batch_keys = missing[start : start + batch]
                    vectors = encode([text_by_key[k] for k in batch_keys])
                    self.put(model, batch_keys, vectors)
                    cached.update(zip(batch_keys, vectors))
                    if meter is not None:
                        meter.update(len(batch_keys))
            finally:
                if meter is not None:
                    meter.close()
        if not keys:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return np.vstack([cached[k] for k in keys]).astype(np.float32, copy=False)
