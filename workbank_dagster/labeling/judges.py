"""Judges: given a prompt's retrieved candidate tasks, decide which tasks the prompt exercises.

Every judge has a `labeler` string `method:model:template-version` (METHOD.md §3) and returns, per
prompt, an ordered list of (task_id, score): rank 1 first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..settings import EMBEDDED_LABELER


@dataclass(frozen=True)
class EmbeddedJudge:
    """Nearest task statements above a similarity floor, at most `labels_per_prompt` of them.

    The floor keeps label density honest (METHOD.md §3): a prompt that resembles no task well
    gets no label rather than three loose ones.
    """

    labels_per_prompt: int = 3
    min_similarity: float = 0.35
    labeler: str = EMBEDDED_LABELER

    def select(self, candidate_ids: np.ndarray, candidate_scores: np.ndarray) -> list[list[tuple[int, float]]]:
        out = []
        for ids, scores in zip(candidate_ids, candidate_scores):
            chosen = [(int(t), float(s)) for t, s in zip(ids, scores) if s >= self.min_similarity][: self.labels_per_prompt]
            out.append(chosen)
        return out
