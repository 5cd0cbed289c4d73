"""Candidate retrieval over embedded prompts: each readable prompt's candidate tasks from the task
index (retrieval.py), by the hybrid score alone (judge v3: `retrieve_embedded`) or narrowed with the
occupation knowledge, the benchmark context and the benchmark's instruction (judges v4 and later, and
the LLM judge's candidates: `retrieve_narrowed`), as `Retrieved`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from .embeddings import EmbeddedPrompts, Embeddings, PromptRows, embed_prompts
from .evidence import EvidenceWeights, OccupationEvidence
from .narrowing import BenchmarkContext, InstructionEvidence, Narrowing
from .prior import OccupationPrior
from .retrieval import Candidates, TaskIndex
from .text import personal_errand


@dataclass
class OccupationKnowledge:
    """What judge v4 knows about occupations besides their tasks: titles and technology (as score
    boosts) and the prior learned from O*NET's text."""

    evidence: OccupationEvidence
    prior: OccupationPrior | None


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
