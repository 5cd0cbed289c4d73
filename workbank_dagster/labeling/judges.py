"""Judges: given a prompt's candidate tasks, decide which tasks the prompt exercises.

Every judge has a `labeler` string `method:model:template-version` (METHOD.md §3) and returns, per
prompt, an ordered list of (task_id, score): rank 1 first.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..settings import EMBEDDED_LABELER
from .retrieval import Candidates, TaskIndex


@dataclass(frozen=True)
class EmbeddedJudge:
    """The selection rule that stands in for a chat model.

    Take the prompt's `n_occupations` best occupations (hybrid retrieval score); label the
    `first_tasks` most similar tasks of the best one and the `other_tasks` most similar of each
    other, best occupation first; drop any task whose similarity to the prompt is below
    `min_similarity`, so a prompt that resembles no work well gets few or no labels (label
    density decides the headline: METHOD.md §3). Score = cosine similarity of prompt and task.
    """

    n_occupations: int = 4
    first_tasks: int = 3
    other_tasks: int = 2
    min_similarity: float = 0.25
    labeler: str = EMBEDDED_LABELER

    def select(self, candidates: Candidates, index: TaskIndex) -> list[list[tuple[int, float]]]:
        out = []
        for row, (positions, sims) in enumerate(zip(candidates.task_positions, candidates.task_similarity)):
            chosen: list[tuple[int, float]] = []
            for rank, occupation in enumerate(candidates.occupations[row][: self.n_occupations]):
                quota = self.first_tasks if rank == 0 else self.other_tasks
                mine = index.task_occupation[positions] == occupation
                for position, sim in zip(positions[mine][:quota], sims[mine][:quota]):
                    if sim >= self.min_similarity:
                        chosen.append((int(index.task_ids[position]), float(sim)))
            out.append(chosen)
        return out

    def describe(self) -> dict:
        return {
            "n_occupations": self.n_occupations,
            "first_tasks": self.first_tasks,
            "other_tasks": self.other_tasks,
            "min_similarity": self.min_similarity,
        }

