"""How judges v4 and later narrow a prompt's candidates beyond the hybrid score (retrieval.py): the
weights that turn evidence into an occupation order, family first (`Narrowing`), and the evidence
of the prompt's benchmark: the other prompts of the suite (`BenchmarkContext`) and the benchmark's
instruction (`InstructionEvidence`, #38). `zscore` is the scale every occupation score is added on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def zscore(values: np.ndarray) -> np.ndarray:
    """Each row on one scale: mean 0 and standard deviation 1 across its columns (a constant row: 0)."""
    mean = values.mean(axis=1, keepdims=True)
    std = values.std(axis=1, keepdims=True)
    return (values - mean) / np.where(std > 0, std, 1.0)


@dataclass(frozen=True)
class BenchmarkContext:
    """The first pass of the benchmark context: per benchmark, the sum of its prompts' z-scored
    occupation scores and their number; `groups[i]` is the benchmark of the i-th retrieved prompt."""

    groups: np.ndarray
    sums: np.ndarray  # (n_benchmarks, n_occupations)
    counts: np.ndarray  # (n_benchmarks,)

    def of(self, score: np.ndarray, rows: slice) -> np.ndarray:
        """The mean z-scored occupation score of the other prompts of each prompt's benchmark
        (leave-one-out, so a prompt is not its own evidence); 0 for a benchmark of one prompt."""
        groups = self.groups[rows]
        others = self.counts[groups] - 1
        mean = (self.sums[groups] - zscore(score)) / np.maximum(others, 1)[:, None]
        mean[others < 1] = 0.0
        return mean


@dataclass(frozen=True)
class InstructionEvidence:
    """Each prompt's benchmark instruction (#38), read as evidence of the work: `groups[i]` is the row
    of prompt i's benchmark in the arrays below (-1: its benchmark has no instruction); `scores` is
    each instruction's own occupation score, z-scored (the hybrid score with titles, technology and
    the prior, as a prompt's); `similarity` is each instruction's cosine with every task statement."""

    groups: np.ndarray  # (n_prompts,)
    scores: np.ndarray  # (n_instructions, n_occupations)
    similarity: np.ndarray  # (n_instructions, n_tasks)

    def of(self, rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """For a block of prompts: the instruction score (zeros where none) and which rows have one."""
        groups = self.groups[rows]
        has = groups >= 0
        out = np.zeros((len(groups), self.scores.shape[1]), dtype=self.scores.dtype)
        out[has] = self.scores[groups[has]]
        return out, has

    def blend(self, sims: np.ndarray, rows: slice, weight: float) -> np.ndarray:
        """Prompt-task similarities moved towards the instruction's: (s + weight × s_instruction) /
        (1 + weight) where the prompt's benchmark has an instruction; the others as they are."""
        groups = self.groups[rows]
        has = groups >= 0
        if not weight or not has.any():
            return sims
        out = sims.copy()
        out[has] = (sims[has] + weight * self.similarity[groups[has]]) / (1.0 + weight)
        return out


@dataclass(frozen=True)
class Narrowing:
    """How judges v4, v5 and v6 turn evidence into an occupation order: family first, then occupations.

    The hybrid score gets the prior's log-probabilities (weight `prior`) and the title and
    technology boosts (already weighted, one sparse row per prompt); a softmax at `temperature`
    turns scores into occupation probabilities, which sum to family probabilities; each
    occupation's rank score then adds `family` × log P(its family), so the best family's
    occupations come first unless another family's occupation is far ahead.

    `context` (benchmark context) adds `context` × the mean z-scored occupation score of the
    benchmark's other prompts: a suite's prompts share an activity (fixing code, answering a
    customer) that each dresses in a different domain (a florist's website, an airline), and the
    mean over the suite brings the shared activity out. It uses other prompts' texts, never a
    benchmark's name or labels.

    A prompt that states no role ("You are a property manager…") has no direct evidence of its
    occupation, and its domain words (a radiology dataset, an NFL game) compete with the activity it
    asks for. For such a prompt, decided per prompt from whether it states a role, the benchmark
    context gets weight `context_without_role` (None: `context`; judges v5 and v6: 4), and each
    signal of its own evidence a multiple of its usual weight: `tasks_without_role` (the mean
    similarity of its best task statements), `centroid_without_role`, `lexical_without_role`,
    `boosts_without_role` (the title and technology boosts) and `prior_without_role`. All 1 in
    judges v4 and v5; judge v6 weighs the task statements 2 ×, the title and technology boosts 2 ×,
    the words 0.5 × and the centroid 0 × (multiplying by 1 leaves a score's bits as they were).
    """

    temperature: float = 1.0
    family: float = 1.0
    prior: float = 0.0
    context: float = 0.0
    context_without_role: float | None = None
    tasks_without_role: float = 1.0
    centroid_without_role: float = 1.0
    lexical_without_role: float = 1.0
    boosts_without_role: float = 1.0
    prior_without_role: float = 1.0
    instruction: float = 0.0
    instruction_without_role: float | None = None
    instruction_tasks: float = 0.0
    # How an instruction itself is scored (InstructionEvidence): its z-scores clipped to ±clip (0:
    # not), and whether a confident title match in it decides its occupation or only votes.
    instruction_clip: float = 0.0
    instruction_decides: bool = True

    @property
    def uses_context(self) -> bool:
        return bool(self.context or self.context_without_role)

    @property
    def uses_instruction(self) -> bool:
        return bool(self.instruction or self.instruction_without_role or self.instruction_tasks)

    def instruction_weights(self, has_role: np.ndarray) -> np.ndarray:
        """The benchmark instruction's weight for each prompt (a column)."""
        without = self.instruction if self.instruction_without_role is None else self.instruction_without_role
        return np.where(has_role, self.instruction, without)[:, None]

    def context_weights(self, has_role: np.ndarray) -> np.ndarray:
        """The benchmark context's weight for each prompt (a column)."""
        without = self.context if self.context_without_role is None else self.context_without_role
        return np.where(has_role, self.context, without)[:, None]

    @staticmethod
    def per_prompt(has_role: np.ndarray, without_role: float) -> np.ndarray:
        """A signal's multiplier for each prompt (a column): 1 where a role is stated, `without_role` where none is."""
        return np.where(has_role, 1.0, without_role)[:, None]
