"""Labeling as pure functions: prompts in, label rows and per-prompt judgement records out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .embedder import DIMENSION, Embedder
from .embedding_store import EmbeddingStore
from .evidence import EvidenceWeights, OccupationEvidence
from .judges import Judgement
from .prior import OccupationPrior
from .retrieval import BenchmarkContext, Candidates, InstructionEvidence, Narrowing, PromptRows, TaskIndex
from .text import chunk_text, is_mostly_cjk, personal_errand, pool_chunks, role_phrase

LABEL_COLUMNS = ["benchmark", "prompt_id", "task_id", "rank", "score", "labeler", "prompt_hash"]
# `confidence` came last (judge v4): tables written before it get the column by migration (assets.py).
JUDGEMENT_COLUMNS = ["benchmark", "prompt_id", "labeler", "prompt_hash", "status", "reason", "n_labels", "n_chunks", "confidence"]
CJK_SCRIPT = "language cjk: the embedding model reads English only"
# The default judge's candidates, one row per (prompt, candidate occupation, candidate task of it), with
# the judge's own abstention bars (the same on every row of a labeler): the label-uncertainty band
# re-draws a prompt's labels from these (analysis/uncertainty.py).
CANDIDATE_COLUMNS = [
    "benchmark", "prompt_id", "labeler", "prompt_hash", "occupation_rank", "onet_soc_code", "occupation_probability",
    "task_rank", "task_id", "similarity", "abstain_below", "min_similarity",
]


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


def build_task_index(tasks: pd.DataFrame, occupations: pd.DataFrame, embeddings: Embeddings) -> TaskIndex:
    """`tasks`: task_id, onet_soc_code, task; `occupations`: onet_soc_code, title, description."""
    tasks = tasks.sort_values("task_id").reset_index(drop=True)
    occupations = occupations[occupations["onet_soc_code"].isin(set(tasks["onet_soc_code"]))].sort_values("onet_soc_code").reset_index(drop=True)
    task_vectors = embeddings.texts(tasks["task"].tolist())
    title_vectors = embeddings.texts(occupations["title"].tolist())
    return TaskIndex(tasks, task_vectors, occupations, title_vectors)


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


@dataclass
class Retrieved:
    """Prompts that can be judged, with their candidates; the rest with the reason they cannot."""

    prompts: pd.DataFrame  # the readable prompts, in order
    candidates: Candidates
    chunk_counts: list[int]
    roles: list[str | None]
    unreadable: pd.DataFrame  # benchmark, prompt_id, prompt_hash, reason
    evidence: list | None = None  # judge v4: one evidence.EvidenceRecord per readable prompt
    errands: list[str | None] | None = None  # per readable prompt: what makes it a personal errand, or None


def retrieve_embedded(embedded: EmbeddedPrompts, index: TaskIndex, **options) -> Retrieved:
    """Candidates by the hybrid score alone (judge v3)."""
    candidates = index.retrieve(embedded.rows(), **options)
    return Retrieved(embedded.prompts, candidates, embedded.chunk_counts, embedded.roles, embedded.unreadable)


def retrieve(prompts: pd.DataFrame, index: TaskIndex, embeddings: Embeddings, **options) -> Retrieved:
    return retrieve_embedded(embed_prompts(prompts, embeddings), index, **options)


def retrieve_narrowed(
    embedded: EmbeddedPrompts, index: TaskIndex, knowledge: OccupationKnowledge, narrowing: Narrowing, evidence: EvidenceWeights, **options
) -> Retrieved:
    """Candidates ranked family first with titles, technology, the O*NET prior and the benchmark
    context (judges v4 and v5, and the LLM judge's candidates). The benchmark context is taken over the
    prompts given, by benchmark: give every prompt of each benchmark at once."""
    texts = embedded.prompts["prompt"].tolist()
    boosts, records = knowledge.evidence.boosts(texts, embedded.roles, evidence)
    common = dict(narrowing=narrowing, boosts=boosts, prior=knowledge.prior, progress=options.pop("progress", None))
    told = instruction_evidence(embedded, index, knowledge, narrowing, evidence) if narrowing.uses_instruction and embedded.instructions.benchmarks else None
    context = None
    if narrowing.uses_context:
        names = sorted(set(embedded.prompts["benchmark"]))
        groups = np.array([names.index(b) for b in embedded.prompts["benchmark"]], dtype=np.int64)
        sums = index.context_sums(embedded.rows(), groups, len(names), **common)
        context = BenchmarkContext(groups, sums, np.bincount(groups, minlength=len(names)))
    candidates = index.retrieve(embedded.rows(), context=context, instructions=told, **common, **options)
    return Retrieved(embedded.prompts, candidates, embedded.chunk_counts, embedded.roles, embedded.unreadable, records, personal_errands(embedded))


def personal_errands(embedded: EmbeddedPrompts) -> list[str | None]:
    """Per readable prompt, the words that make it a personal errand (text.personal_errand), where
    neither the prompt nor its benchmark's instruction gives the agent a worker's role; else None."""
    told = embedded.instructions
    with_role = {b for b, r in zip(told.benchmarks, told.roles) if r is not None}
    return [
        None if own or benchmark in with_role else personal_errand(text)
        for text, own, benchmark in zip(embedded.prompts["prompt"], embedded.has_role, embedded.prompts["benchmark"])
    ]


def instruction_evidence(
    embedded: EmbeddedPrompts, index: TaskIndex, knowledge: OccupationKnowledge, narrowing: Narrowing, evidence: EvidenceWeights
) -> InstructionEvidence:
    """Each benchmark instruction scored as a prompt would be (the hybrid score, its titles and tools,
    the prior; no benchmark context), z-scored, with its task similarities; mapped to the prompts."""
    told = embedded.instructions
    rows = PromptRows(told.texts, told.vectors, told.role_vectors, np.array([r is not None for r in told.roles], dtype=bool), told.roles, told.benchmarks)
    weights = evidence if narrowing.instruction_decides else replace(evidence, decide_at=float("inf"))
    boosts, _ = knowledge.evidence.boosts(told.texts, told.roles, weights)
    # One instruction at a time: a BLAS kernel may round a row of a product differently in stacks of
    # different heights, and a benchmark's labels must not depend on which others are labeled beside it.
    parts = [index.own_scores(rows[i : i + 1], narrowing=narrowing, boosts=boosts[i : i + 1], prior=knowledge.prior) for i in range(len(rows))]
    sims, scores = (np.concatenate(part) for part in zip(*parts)) if parts else (np.zeros((0, len(index.task_ids))), np.zeros((0, len(index.occupation_codes))))
    if narrowing.instruction_clip:
        scores = np.clip(scores, -narrowing.instruction_clip, narrowing.instruction_clip)
    position = {b: i for i, b in enumerate(told.benchmarks)}
    groups = np.array([position.get(b, -1) for b in embedded.prompts["benchmark"]], dtype=np.int64)
    return InstructionEvidence(groups, scores, sims)


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


def label_rows(
    retrieved: Retrieved,
    chosen: list[list[tuple[int, float]]],
    labeler: str,
    statuses: list[tuple[str, str]] | None = None,
    confidences: list[float | None] | None = None,
):
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
        confidence = confidences[i] if confidences is not None else None
        judgements.append((row.benchmark, row.prompt_id, labeler, row.prompt_hash, status, reason, len(labels), retrieved.chunk_counts[i], confidence))
    for row in retrieved.unreadable.itertuples(index=False):
        judgements.append((row.benchmark, row.prompt_id, labeler, row.prompt_hash, "unlabeled", row.reason, 0, 0, None))
    labels = pd.DataFrame(rows, columns=LABEL_COLUMNS) if rows else empty_labels()
    labels = labels.astype({"task_id": "Int64", "rank": "Int64", "score": "Float64"})
    judged = pd.DataFrame(judgements, columns=JUDGEMENT_COLUMNS).astype({"n_labels": "Int64", "n_chunks": "Int64", "confidence": "Float64"})
    return labels, judged


def candidate_rows(retrieved: Retrieved, index: TaskIndex, labeler: str, abstain_below: float, min_similarity: float) -> pd.DataFrame:
    """The narrowed candidates of every readable prompt as rows (CANDIDATE_COLUMNS): each of its
    candidate occupations, best first, with the judge's probability of it, and that occupation's
    candidate tasks, most similar first. Candidate tasks of other occupations (the nearest tasks of
    the pool) are left out. `abstain_below` and `min_similarity` are the judge's bars, written on
    every row so that a reader can tell which labeled prompts fell below them (labeled only because
    of the abstention cap) without importing the judge."""
    candidates = retrieved.candidates
    if candidates.occupation_probability is None:
        raise ValueError("candidate_rows needs narrowed candidates (occupation probabilities): judges v4 and later")
    rows = []
    for row, prompt in enumerate(retrieved.prompts.itertuples(index=False)):
        positions, sims = candidates.task_positions[row], candidates.task_similarity[row]
        owner = index.task_occupation[positions]
        for rank, (occupation, probability) in enumerate(zip(candidates.occupations[row], candidates.occupation_probability[row]), start=1):
            code = index.occupation_codes[occupation]
            for task_rank, i in enumerate(np.nonzero(owner == occupation)[0], start=1):  # similarity order: the pool is sorted by it
                rows.append((prompt.benchmark, prompt.prompt_id, labeler, prompt.prompt_hash, rank, code, float(probability),
                             task_rank, int(index.task_ids[positions[i]]), float(sims[i]), abstain_below, min_similarity))
    frame = pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)
    types = {"occupation_rank": "Int64", "occupation_probability": "Float64", "task_rank": "Int64", "task_id": "Int64", "similarity": "Float64",
             "abstain_below": "Float64", "min_similarity": "Float64"}
    frame = frame.astype(types)
    for name in ("benchmark", "prompt_id", "labeler", "prompt_hash", "onet_soc_code"):
        frame[name] = frame[name].astype("string")
    return frame


def judgement_rows(retrieved: Retrieved, judgements: list[Judgement], labeler: str):
    """Label rows and judgement records from judge v4's judgements (status, reason, confidence each)."""
    return label_rows(
        retrieved,
        [j.labels for j in judgements],
        labeler,
        [(j.status, j.reason) for j in judgements],
        [j.confidence for j in judgements],
    )


@dataclass
class OccupationKnowledge:
    """What judge v4 knows about occupations besides their tasks: titles and technology (as score
    boosts) and the prior learned from O*NET's text."""

    evidence: OccupationEvidence
    prior: OccupationPrior | None
