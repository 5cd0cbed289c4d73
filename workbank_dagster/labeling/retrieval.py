"""Nearest-neighbour retrieval over unit vectors, in bounded memory (chunks of queries)."""

from __future__ import annotations

import numpy as np


def top_k(queries: np.ndarray, corpus: np.ndarray, k: int, *, chunk: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Indices and cosine similarities of the k most similar corpus rows per query, best first.

    Memory is O(chunk × len(corpus)) whatever the number of queries. Ties are broken by corpus
    index, so the answer is deterministic.
    """
    n, m = len(queries), len(corpus)
    k = min(k, m)
    indices = np.zeros((n, k), dtype=np.int64)
    scores = np.zeros((n, k), dtype=np.float32)
    if n == 0 or k == 0:
        return indices, scores
    for start in range(0, n, chunk):
        sims = queries[start : start + chunk] @ corpus.T
        part = np.argpartition(-sims, kth=k - 1, axis=1)[:, :k] if k < m else np.tile(np.arange(m), (len(sims), 1))
        part_scores = np.take_along_axis(sims, part, axis=1)
        # Sort by score descending, then index ascending.
        order = np.lexsort((part, -part_scores), axis=1)
        indices[start : start + chunk] = np.take_along_axis(part, order, axis=1)
        scores[start : start + chunk] = np.take_along_axis(part_scores, order, axis=1)
    return indices, scores
