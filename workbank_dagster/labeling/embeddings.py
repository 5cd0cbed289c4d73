"""Prompts as vectors, the first step of a prompt's vectors through labeling: `Embeddings` (text →
vector through the embedding store, the model touched only for texts the store lacks), the prompts and
their benchmarks' instructions embedded (`embed_prompts`: EmbeddedPrompts, EmbeddedInstructions), and
`PromptRows`, what retrieval reads of embedded prompts.

A prompt's vectors go one way: embeddings.py → retrieval.py (the task index scores them, with the
weights and benchmark evidence of narrowing.py for judges v4 and later) → prompt_retrieval.py (their
candidates) → label_tables.py (the rows written); none of these imports a later one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .embedder import DIMENSION, Embedder
from .embedding_store import EmbeddingStore
from .text import chunk_text, is_mostly_cjk, pool_chunks, role_phrase

CJK_SCRIPT = "language cjk: the embedding model reads English only"


@dataclass
class Embeddings:
    """Text → vector through the store; the model is touched only for texts the store lacks."""

    store: EmbeddingStore
    embedder: Embedder
    stats: dict = field(default_factory=lambda: {"chunks": 0})
    progress: Callable[[str, int], object] | None = None  # progress.reporter(...): embedding is the long step of a cold run

    def texts(self, texts: list[str]) -> np.ndarray:
        return self.store.embed(self.embedder.store_key, texts, self.embedder.encode, progress=self.progress)

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


@dataclass(frozen=True)
class PromptRows:
    """What retrieval reads of each prompt: its text, its embedding, the embedding of the role it
    states (zeros where none), whether it states one, the role's words, and its benchmark (each
    benchmark's prompts contiguous)."""

    texts: list[str]
    vectors: np.ndarray
    role_vectors: np.ndarray
    has_role: np.ndarray
    roles: list[str | None]
    benchmarks: list[str]

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, rows: slice) -> PromptRows:
        return PromptRows(
            self.texts[rows], self.vectors[rows], self.role_vectors[rows], self.has_role[rows], self.roles[rows], self.benchmarks[rows]
        )

    def blocks(self, size: int) -> Iterator[slice]:
        """Slices of at most `size` rows, each within one benchmark, cut at multiples of `size` from
        the benchmark's first prompt: the blocks of a benchmark do not depend on the other benchmarks."""
        seen: set[str] = set()
        start = 0
        while start < len(self):
            benchmark = self.benchmarks[start]
            if benchmark in seen:
                raise ValueError(f"the prompts of benchmark {benchmark!r} are not contiguous: retrieval needs them in one run")
            seen.add(benchmark)
            end = start
            while end < len(self) and self.benchmarks[end] == benchmark:
                end += 1
            for first in range(start, end, size):
                yield slice(first, min(first + size, end))
            start = end


@dataclass(frozen=True)
class EmbeddedInstructions:
    """The instruction texts of some benchmarks (#38), embedded as prompts are (pooled chunks), with
    the role each states: benchmark-level evidence of the work (see InstructionEvidence)."""

    benchmarks: list[str]
    texts: list[str]
    vectors: np.ndarray
    roles: list[str | None]
    role_vectors: np.ndarray

    def subset(self, keys) -> EmbeddedInstructions:
        keep = [i for i, b in enumerate(self.benchmarks) if b in set(keys)]
        return EmbeddedInstructions(
            [self.benchmarks[i] for i in keep], [self.texts[i] for i in keep], self.vectors[keep], [self.roles[i] for i in keep], self.role_vectors[keep]
        )


def embed_instructions(instructions: dict[str, str], embeddings: Embeddings) -> EmbeddedInstructions:
    """benchmark → instruction text, embedded (sorted by benchmark)."""
    benchmarks = sorted(instructions)
    texts = [instructions[b] for b in benchmarks]
    vectors, _ = embeddings.prompts(texts) if texts else (np.zeros((0, DIMENSION), dtype=np.float32), [])
    roles = [role_phrase(t) for t in texts]
    role_vectors = np.zeros((len(texts), DIMENSION), dtype=np.float32)
    stated = [i for i, r in enumerate(roles) if r is not None]
    if stated:
        role_vectors[stated] = embeddings.texts([roles[i] for i in stated])
    return EmbeddedInstructions(benchmarks, texts, vectors, roles, role_vectors)


NO_INSTRUCTIONS = EmbeddedInstructions([], [], np.zeros((0, DIMENSION), dtype=np.float32), [], np.zeros((0, DIMENSION), dtype=np.float32))


@dataclass
class EmbeddedPrompts:
    """Prompts split into those the model can read and those it cannot, the readable ones embedded
    (pooled chunks) with the role each states, and their benchmarks' instructions (none: as before
    #38): what both embedded judges and the LLM judge share."""

    prompts: pd.DataFrame  # the readable prompts, in order
    vectors: np.ndarray
    chunk_counts: list[int]
    roles: list[str | None]
    role_vectors: np.ndarray  # zero rows where no role is stated
    has_role: np.ndarray
    unreadable: pd.DataFrame  # benchmark, prompt_id, prompt_hash, reason
    instructions: EmbeddedInstructions = NO_INSTRUCTIONS

    def rows(self) -> PromptRows:
        """The readable prompts as retrieval reads them."""
        return PromptRows(
            self.prompts["prompt"].tolist(), self.vectors, self.role_vectors, self.has_role, self.roles, self.prompts["benchmark"].tolist()
        )


def embed_prompts(prompts: pd.DataFrame, embeddings: Embeddings, instructions: dict[str, str] | None = None) -> EmbeddedPrompts:
    """The prompts embedded, with the instructions (benchmark → text) of their benchmarks, if any."""
    prompts = prompts.reset_index(drop=True)
    readable_mask = np.array([not is_mostly_cjk(p) for p in prompts["prompt"]], dtype=bool)
    readable = prompts[readable_mask].reset_index(drop=True)
    unreadable = prompts[~readable_mask][["benchmark", "prompt_id", "prompt_hash"]].copy()
    unreadable["reason"] = CJK_SCRIPT
    texts = readable["prompt"].tolist()
    vectors, chunk_counts = embeddings.prompts(texts)
    roles = [role_phrase(t) for t in texts]
    has_role = np.array([r is not None for r in roles], dtype=bool)
    role_vectors = np.zeros((len(texts), vectors.shape[1] if vectors.ndim == 2 else DIMENSION), dtype=np.float32)
    if has_role.any():
        role_vectors[has_role] = embeddings.texts([r for r in roles if r is not None])
    mine = {b: t for b, t in (instructions or {}).items() if b in set(prompts["benchmark"])}
    embedded_instructions = embed_instructions(mine, embeddings) if mine else NO_INSTRUCTIONS
    return EmbeddedPrompts(readable, vectors, chunk_counts, roles, role_vectors, has_role, unreadable, embedded_instructions)
