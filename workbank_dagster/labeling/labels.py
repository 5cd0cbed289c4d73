"""Labeling as pure functions: prompts in, label rows and per-prompt judgement records out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .embedder import Embedder
from .embedding_store import EmbeddingStore
from .judges import EmbeddedJudge
from .retrieval import Candidates, TaskIndex
from .text import chunk_text, language_of, pool_chunks, role_phrase

LABEL_COLUMNS = ["benchmark", "prompt_id", "task_id", "rank", "score", "labeler", "prompt_hash"]
JUDGEMENT_COLUMNS = ["benchmark", "prompt_id", "labeler", "prompt_hash", "status", "reason", "n_labels", "n_chunks"]
NOT_ENGLISH = "language {language}: the embedding model reads English only"


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


def build_task_index(tasks: pd.DataFrame, occupations: pd.DataFrame, embeddings: Embeddings) -> TaskIndex:
    """`tasks`: task_id, onet_soc_code, task; `occupations`: onet_soc_code, title, description."""
    tasks = tasks.sort_values("task_id").reset_index(drop=True)
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))].sort_values("onet_soc_code").reset_index(drop=True)
    task_vectors = embeddings.texts(tasks["task"].tolist())
    title_vectors = embeddings.texts(occupations["title"].tolist())
    return TaskIndex(tasks, task_vectors, occupations, title_vectors)


@dataclass
class Retrieved:
    """Prompts that can be judged, with their candidates; the rest with the reason they cannot."""

    prompts: pd.DataFrame  # the readable prompts, in order
    candidates: Candidates
    chunk_counts: list[int]
    roles: list[str | None]
    unreadable: pd.DataFrame  # benchmark, prompt_id, prompt_hash, reason


def retrieve(prompts: pd.DataFrame, index: TaskIndex, embeddings: Embeddings, **options) -> Retrieved:
    prompts = prompts.reset_index(drop=True)
    languages = [language_of(p) for p in prompts["prompt"]]
    readable_mask = np.array([lang == "en" for lang in languages], dtype=bool)
    readable = prompts[readable_mask].reset_index(drop=True)
    unreadable = prompts[~readable_mask][["benchmark", "prompt_id", "prompt_hash"]].copy()
    unreadable["reason"] = [NOT_ENGLISH.format(language=lang) for lang, ok in zip(languages, readable_mask) if not ok]
    texts = readable["prompt"].tolist()
    vectors, chunk_counts = embeddings.prompts(texts)
    roles = [role_phrase(t) for t in texts]
    has_role = np.array([r is not None for r in roles], dtype=bool)
    role_vectors = embeddings.texts([r for r in roles if r is not None])
    full_roles = np.zeros((len(texts), index.task_vectors.shape[1]), dtype=np.float32)
    if has_role.any():
        full_roles[has_role] = role_vectors
    candidates = index.retrieve(texts, vectors, full_roles, has_role, roles, **options)
    return Retrieved(readable, candidates, chunk_counts, roles, unreadable)


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


def label_rows(retrieved: Retrieved, chosen: list[list[tuple[int, float]]], labeler: str, statuses: list[tuple[str, str]] | None = None):
    """Label rows and judgement records from a judge's choices (one list per readable prompt)."""
    rows, judgements = [], []
    for i, row in enumerate(retrieved.prompts.itertuples(index=False)):
        labels = chosen[i]
        for rank, (task_id, score) in enumerate(labels, start=1):
            rows.append((row.benchmark, row.prompt_id, task_id, rank, score, labeler, row.prompt_hash))
        if statuses is not None:
            status, reason = statuses[i]
        else:
            status, reason = ("labeled", "") if labels else ("no_match", "no candidate task similar enough")
        judgements.append((row.benchmark, row.prompt_id, labeler, row.prompt_hash, status, reason, len(labels), retrieved.chunk_counts[i]))
    for row in retrieved.unreadable.itertuples(index=False):
        judgements.append((row.benchmark, row.prompt_id, labeler, row.prompt_hash, "unlabeled", row.reason, 0, 0))
    labels = pd.DataFrame(rows, columns=LABEL_COLUMNS) if rows else empty_labels()
    labels = labels.astype({"task_id": "Int64", "rank": "Int64", "score": "Float64"})
    judged = pd.DataFrame(judgements, columns=JUDGEMENT_COLUMNS).astype({"n_labels": "Int64", "n_chunks": "Int64"})
    return labels, judged


def label_with_embedded_judge(prompts: pd.DataFrame, index: TaskIndex, embeddings: Embeddings, judge: EmbeddedJudge, **options):
    """Label every prompt (columns benchmark, prompt_id, prompt, prompt_hash) with the embedded judge.

    Prompts the English-only model cannot read are not guessed at: they are recorded with status
    `unlabeled` and the reason, and get no label rows.
    """
    retrieved = retrieve(prompts, index, embeddings, **options)
    chosen = judge.select(retrieved.candidates, index)
    return label_rows(retrieved, chosen, judge.labeler)
