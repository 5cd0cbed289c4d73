"""Labeling as pure functions: prompts in, label rows and per-prompt judgement records out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .embedder import Embedder
from .embedding_store import EmbeddingStore
from .judges import EmbeddedJudge
from .retrieval import top_k
from .text import chunk_text, language_of, pool_chunks

LABEL_COLUMNS = ["benchmark", "prompt_id", "task_id", "rank", "score", "labeler", "prompt_hash"]
JUDGEMENT_COLUMNS = ["benchmark", "prompt_id", "labeler", "prompt_hash", "status", "reason", "n_labels", "n_chunks"]


@dataclass
class Embeddings:
    """Text → vector through the store; the model is touched only for texts the store lacks."""

    store: EmbeddingStore
    embedder: Embedder
    stats: dict = field(default_factory=lambda: {"chunks": 0})

    def texts(self, texts: list[str]) -> np.ndarray:
        return self.store.embed(self.embedder.model_name, texts, self.embedder.encode)

    def prompts(self, prompts: list[str]) -> tuple[np.ndarray, list[int]]:
        """One pooled vector per prompt (mean of its chunks) and the number of chunks of each."""
        chunks: list[str] = []
        owners: list[int] = []
        counts: list[int] = []
        for i, prompt in enumerate(prompts):
            pieces = chunk_text(prompt)
            chunks.extend(pieces)
            owners.extend([i] * len(pieces))
            counts.append(len(pieces))
        self.stats["chunks"] += len(chunks)
        vectors = self.texts(chunks)
        return pool_chunks(vectors, np.asarray(owners, dtype=np.int64), len(prompts)), counts


def empty_labels() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "benchmark": pd.array([], dtype="string"),
            "prompt_id": pd.array([], dtype="string"),
            "task_id": pd.array([], dtype="Int64"),
            "rank": pd.array([], dtype="Int64"),
            "score": pd.array([], dtype="Float64"),
            "labeler": pd.array([], dtype="string"),
            "prompt_hash": pd.array([], dtype="string"),
        }
    )


def label_with_embedded_judge(
    prompts: pd.DataFrame,
    task_ids: np.ndarray,
    task_vectors: np.ndarray,
    embeddings: Embeddings,
    judge: EmbeddedJudge,
    *,
    n_candidates: int = 50,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Label every prompt (columns benchmark, prompt_id, prompt, prompt_hash).

    Prompts the English-only model cannot read are not guessed at: they are recorded with status
    `unlabeled` and the reason, and get no label rows.
    """
    prompts = prompts.reset_index(drop=True)
    languages = [language_of(p) for p in prompts["prompt"]]
    readable = [i for i, lang in enumerate(languages) if lang == "en"]
    judgements = []
    label_rows = []
    if readable:
        vectors, chunk_counts = embeddings.prompts([prompts.at[i, "prompt"] for i in readable])
        cand_idx, cand_scores = top_k(vectors, task_vectors, n_candidates)
        chosen = judge.select(task_ids[cand_idx], cand_scores)
    else:
        chunk_counts, chosen = [], []
    by_position = dict(zip(readable, zip(chosen, chunk_counts)))
    for i, row in prompts.iterrows():
        if i in by_position:
            labels, n_chunks = by_position[i]
            for rank, (task_id, score) in enumerate(labels, start=1):
                label_rows.append((row["benchmark"], row["prompt_id"], task_id, rank, score, judge.labeler, row["prompt_hash"]))
            status = "labeled" if labels else "no_match"
            reason = "" if labels else f"no task statement within similarity {judge.min_similarity}"
            judgements.append((row["benchmark"], row["prompt_id"], judge.labeler, row["prompt_hash"], status, reason, len(labels), n_chunks))
        else:
            judgements.append(
                (row["benchmark"], row["prompt_id"], judge.labeler, row["prompt_hash"], "unlabeled", f"language {languages[i]}: the embedding model reads English only", 0, 0)
            )
    labels = pd.DataFrame(label_rows, columns=LABEL_COLUMNS) if label_rows else empty_labels()
    labels = labels.astype({"task_id": "Int64", "rank": "Int64", "score": "Float64"})
    judged = pd.DataFrame(judgements, columns=JUDGEMENT_COLUMNS).astype({"n_labels": "Int64", "n_chunks": "Int64"})
    return labels, judged
