"""Occupation evidence beyond similarity, for judge v4: the role a prompt states and the tools it names.

Each prompt gets a sparse row of score boosts over the task index's occupations:

- **title**: the stated role ("You are a staff accountant…", text.role_phrase) looked up in
  O*NET's titles, alternate titles and reported titles (titles.TitleIndex). The boost is
  `title_weight` × the match's confidence × P(occupation | title); a match at least `decide_at`
  confident adds `DECIDES` to its best occupation, which then ranks first whatever else the prompt
  resembles ("a confident title match should decide the occupation").
- **technology**: tools the prompt names, matched against O*NET Technology Skills
  (technology.TechnologyIndex): `technology_weight` × the IDF-weighted share of the tools that the
  occupation lists.

What matched is kept per prompt (`EvidenceRecord`) so that the judgement record can say why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .technology import TechnologyIndex
from .titles import TitleIndex

DECIDES = 50.0


@dataclass(frozen=True)
class EvidenceRecord:
    title: str | None  # the normalised title that matched
    title_confidence: float
    title_decides: bool
    tools: tuple[str, ...]


@dataclass(frozen=True)
class EvidenceWeights:
    title_weight: float = 4.0
    decide_at: float = 0.7
    technology_weight: float = 1.0


class OccupationEvidence:
    def __init__(self, codes: list[str], titles: TitleIndex | None, technology: TechnologyIndex | None) -> None:
        self.position = {code: i for i, code in enumerate(codes)}
        self.n = len(codes)
        self.titles = titles
        self.technology = technology

    def boosts(self, texts: list[str], roles: list[str | None], weights: EvidenceWeights) -> tuple[sp.csr_matrix, list[EvidenceRecord]]:
        rows, cols, values, records = [], [], [], []
        for row, (text, role) in enumerate(zip(texts, roles)):
            found = self.titles.match(role) if (self.titles is not None and role) else None
            decides = False
            if found is not None:
                for code, p in found.distribution.items():
                    rows.append(row)
                    cols.append(self.position[code])
                    values.append(weights.title_weight * found.confidence * p)
                if found.confidence >= weights.decide_at:
                    decides = True
                    rows.append(row)
                    cols.append(self.position[found.best[0]])
                    values.append(DECIDES)
            tools: list[str] = []
            if self.technology is not None and weights.technology_weight:
                share, tools = self.technology.evidence(text)
                (hit,) = np.nonzero(share)
                rows.extend([row] * len(hit))
                cols.extend(hit.tolist())
                values.extend((weights.technology_weight * share[hit]).tolist())
            records.append(EvidenceRecord(found.matched if found else None, found.confidence if found else 0.0, decides, tuple(tools)))
        matrix = sp.csr_matrix((values, (rows, cols)), shape=(len(texts), self.n), dtype=np.float32)
        return matrix, records
