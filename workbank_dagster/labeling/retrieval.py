"""Candidate retrieval, shared by every judge.

For each prompt, occupations are ranked by a hybrid score, the sum of z-scored signals:

- ``tasks``: mean cosine similarity of the prompt to the occupation's 3 most similar task statements;
- ``centroid`` (weight 0.5): similarity to the mean of the occupation's task vectors;
- ``lexical``: TF-IDF similarity (words and bigrams) of the prompt, without its URLs, to a document
  made of the occupation's title (twice), description and task statements: domain words (nurse,
  lease, subpoena) that a small sentence model blurs. URLs are dropped because their host names
  are not words of the work (every TheAgentCompany prompt links the-agent-company.com, which
  matched the "agents" and "company" of insurance-clerk tasks);
- ``role`` and ``role_words``: when the prompt states a role ("You are a property manager…"),
  the similarity of that phrase to the occupation's title, as embeddings and as shared words.

Judges v4 and later add the prior, title and technology boosts and the benchmark's evidence, and
rank occupations family first (narrowing.py: `Narrowing`, `BenchmarkContext`, `InstructionEvidence`).

The candidates of a prompt are the `per_occupation` most similar tasks of each of its
`n_occupations` best occupations plus its `n_nearest` nearest task statements overall (at most 40
with the defaults), ordered by similarity.

Everything is computed in blocks of at most `chunk` prompts, so memory is bounded whatever the
number of prompts. A block never spans two benchmarks and starts at a fixed offset within its
benchmark (`PromptRows.blocks`, embeddings.py): a benchmark's matrix products are then the same products whether it
is retrieved alone, beside other benchmarks or in a backfill. This matters because a BLAS kernel may
round a row's product differently in stacks of different heights (OpenBLAS with
OPENBLAS_CORETYPE=Haswell does, by up to ~5e-5 in float32), which made a benchmark's scores depend on
what else was labeled in the same run.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .embeddings import PromptRows
from .narrowing import BenchmarkContext, InstructionEvidence, Narrowing, zscore
from .text import without_urls

WEIGHTS = {"tasks": 1.0, "centroid": 0.5, "lexical": 1.0, "role": 1.0, "role_words": 1.0}
_STOP = {"and", "of", "the", "all", "other", "except", "a", "an", "or", "in", "for"}


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
        order = np.lexsort((part, -part_scores), axis=1)
        indices[start : start + chunk] = np.take_along_axis(part, order, axis=1)
        scores[start : start + chunk] = np.take_along_axis(part_scores, order, axis=1)
    return indices, scores


def title_words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP}


class _NoProgress:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _meter(progress, what: str, total: int):
    return progress(what, total, "prompts") if progress is not None else _NoProgress()


@dataclass
class Candidates:
    """Per prompt: candidate task positions (into the index), their similarity, and occupation order.

    `occupation_probability` and `family_probability` are filled when retrieval narrows by family
    (judge v4): the softmax probability of each of the best occupations, and of the best family.
    """

    task_positions: list[np.ndarray]
    task_similarity: list[np.ndarray]
    occupations: np.ndarray  # (n_prompts, n_best) occupation positions, best first
    occupation_scores: np.ndarray
    occupation_probability: np.ndarray | None = None  # (n_prompts, n_best)
    family_probability: np.ndarray | None = None  # (n_prompts,): of the best occupation's family


class TaskIndex:
    """Task statements and occupations, embedded and indexed for retrieval."""

    def __init__(
        self,
        tasks: pd.DataFrame,  # task_id, onet_soc_code, task (ordered as task_vectors)
        task_vectors: np.ndarray,
        occupations: pd.DataFrame,  # onet_soc_code, title, description
        title_vectors: np.ndarray,
    ) -> None:
        self.tasks = tasks.reset_index(drop=True)
        self.task_ids = self.tasks["task_id"].to_numpy(dtype=np.int64)
        self.task_vectors = task_vectors
        codes = list(occupations["onet_soc_code"])
        self.occupation_codes = np.array(codes)
        position = {code: i for i, code in enumerate(codes)}
        self.task_occupation = np.array([position[c] for c in self.tasks["onet_soc_code"]], dtype=np.int64)
        self.title_vectors = title_vectors
        self.titles = list(occupations["title"])
        self._title_words = [title_words(t) for t in self.titles]
        centroid = np.zeros((len(codes), task_vectors.shape[1]), dtype=np.float32)
        np.add.at(centroid, self.task_occupation, task_vectors)
        self.centroids = centroid / np.maximum(np.linalg.norm(centroid, axis=1, keepdims=True), 1e-12)
        self.tasks_of = [np.where(self.task_occupation == i)[0] for i in range(len(codes))]
        # Families (SOC major groups, the code's first two digits), in order, and each occupation's.
        self.families = sorted({code[:2] for code in codes})
        self.occupation_family = np.array([self.families.index(code[:2]) for code in codes], dtype=np.int64)
        self._occupations = occupations

    @functools.cached_property
    def _lexical(self):
        """The occupations' TF-IDF model and document matrix (title twice, description, task
        statements), fitted on the first lexical search: a step that only reads the vectors (the task
        index's own, whose twins are kept) never pays the fit (about 0.6 s) or scikit-learn's import."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        occupations = self._occupations
        statements = self.tasks.groupby("onet_soc_code", sort=False)["task"].apply(" ".join)
        documents = [
            f"{title} {title} {description or ''} {statements.get(code, '')}"
            for code, title, description in zip(occupations["onet_soc_code"], occupations["title"], occupations["description"].fillna(""))
        ]
        tfidf = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2 if len(documents) >= 50 else 1, ngram_range=(1, 2), max_features=200_000)
        return tfidf, tfidf.fit_transform(documents)

    def near_identical_pairs(self, threshold: float, chunk: int = 2048) -> pd.DataFrame:
        """task_id, twin_task_id, cosine: every pair of task statements of different occupations whose
        embeddings' cosine is at least `threshold`, in both directions (analysis/near_duplicates.py)."""
        found = []
        for start in range(0, len(self.task_ids), chunk):
            sims = self.task_vectors[start : start + chunk] @ self.task_vectors.T
            rows, columns = np.nonzero(sims >= threshold)
            keep = self.task_occupation[start + rows] != self.task_occupation[columns]
            rows, columns = rows[keep], columns[keep]
            found.append((self.task_ids[start + rows], self.task_ids[columns], sims[rows, columns]))
        ids, twins, cosine = (np.concatenate(parts) for parts in zip(*found))
        frame = pd.DataFrame({"task_id": ids, "twin_task_id": twins, "cosine": cosine.astype(np.float64)})
        return frame.astype({"task_id": "int64", "twin_task_id": "int64"}).sort_values(["task_id", "twin_task_id"]).reset_index(drop=True)

    def _task_evidence(self, sims: np.ndarray, top: int = 3) -> np.ndarray:
        """Mean of each occupation's `top` best task similarities, for a block of prompts."""
        out = np.zeros((len(sims), len(self.occupation_codes)), dtype=np.float32)
        for o, positions in enumerate(self.tasks_of):
            block = sims[:, positions]
            if block.shape[1] > top:
                block = -np.partition(-block, top - 1, axis=1)[:, :top]
            out[:, o] = block.mean(axis=1)
        return out

    def _scores(self, block: PromptRows, narrowing: Narrowing | None = None):
        """Prompt-task similarities and the hybrid occupation score of a block of prompts; with a
        narrowing, the signals of a prompt that states no role get its `*_without_role` multiples."""
        texts, vectors, role_vectors, role_mask, roles = block.texts, block.vectors, block.role_vectors, block.has_role, block.roles
        sims = vectors @ self.task_vectors.T
        tfidf, documents = self._lexical
        lexical = (tfidf.transform([without_urls(t) for t in texts]) @ documents.T).toarray()
        mix = narrowing or Narrowing()
        score = (
            WEIGHTS["tasks"] * mix.per_prompt(role_mask, mix.tasks_without_role) * zscore(self._task_evidence(sims))
            + WEIGHTS["centroid"] * mix.per_prompt(role_mask, mix.centroid_without_role) * zscore(vectors @ self.centroids.T)
            + WEIGHTS["lexical"] * mix.per_prompt(role_mask, mix.lexical_without_role) * zscore(lexical)
        )
        if role_mask.any():
            role_title = zscore(role_vectors @ self.title_vectors.T)
            words = np.zeros((len(vectors), len(self.titles)))
            for row, role in enumerate(roles):
                if role:
                    mine = title_words(role)
                    words[row] = [len(mine & t) / max(len(mine | t), 1) for t in self._title_words]
            score = score + role_mask[:, None] * (WEIGHTS["role"] * role_title + WEIGHTS["role_words"] * words)
        return sims, score

    def _evidence(self, score: np.ndarray, block: PromptRows, rows: slice, narrowing: Narrowing, boosts, prior) -> np.ndarray:
        """The hybrid score with judge v4's prior and title/technology boosts added (for a prompt that
        states no role, × `prior_without_role` and × `boosts_without_role`)."""
        if prior is not None and narrowing.prior:
            score = score + narrowing.per_prompt(block.has_role, narrowing.prior_without_role) * (narrowing.prior * prior.log_proba(block.vectors))
        if boosts is not None:
            score = score + narrowing.per_prompt(block.has_role, narrowing.boosts_without_role) * boosts[rows].toarray()
        return score

    def own_scores(self, rows: PromptRows, *, narrowing: Narrowing, boosts=None, prior=None) -> tuple[np.ndarray, np.ndarray]:
        """Task similarities and the z-scored occupation score of a few texts scored on their own (no
        benchmark context): how a benchmark's instruction is read (InstructionEvidence)."""
        sims, score = self._scores(rows, narrowing)
        return sims, zscore(self._evidence(score, rows, slice(0, len(rows)), narrowing, boosts, prior))

    def context_sums(
        self,
        prompts: PromptRows,
        groups: np.ndarray,
        n_groups: int,
        *,
        narrowing: Narrowing,
        boosts=None,
        prior=None,
        chunk: int = 512,
        progress=None,
    ) -> np.ndarray:
        """Per group (benchmark), the sum of its prompts' z-scored occupation scores: the first pass of
        the benchmark context (see `Narrowing.context`)."""
        sums = np.zeros((n_groups, len(self.occupation_codes)))
        meter = _meter(progress, "benchmark context", len(prompts))
        for rows in prompts.blocks(chunk):
            block = prompts[rows]
            _, score = self._scores(block, narrowing)
            np.add.at(sums, groups[rows], zscore(self._evidence(score, block, rows, narrowing, boosts, prior)))
            meter.update(len(block))
        meter.close()
        return sums

    def retrieve(
        self,
        prompts: PromptRows,
        *,
        n_occupations: int = 5,
        per_occupation: int = 6,
        n_nearest: int = 10,
        chunk: int = 512,
        narrowing: Narrowing | None = None,
        boosts=None,  # scipy.sparse (n_prompts, n_occupations): title and technology evidence, weighted
        prior=None,  # OccupationPrior: log P(occupation | prompt vector) from O*NET's own text
        context: BenchmarkContext | None = None,
        instructions: InstructionEvidence | None = None,
        progress=None,  # progress.reporter(...): (what, total) -> Progress
    ) -> Candidates:
        # Candidates go into arrays allocated once: a small array kept per prompt, allocated between
        # the large per-chunk temporaries, pins freed heap and made memory grow ~10 KB per prompt.
        n_prompts = len(prompts)
        width = n_occupations * per_occupation + n_nearest
        flat_positions = np.full((n_prompts, width), -1, dtype=np.int32)
        flat_similarity = np.zeros((n_prompts, width), dtype=np.float32)
        lengths = np.zeros(n_prompts, dtype=np.int64)
        n_best = min(n_occupations, len(self.occupation_codes))
        occupations = np.zeros((n_prompts, n_best), dtype=np.int64)
        scores = np.zeros((n_prompts, n_best))
        probability = np.zeros((n_prompts, n_best)) if narrowing else None
        family_probability = np.zeros(n_prompts) if narrowing else None
        meter = _meter(progress, "retrieval" + (" (narrowed)" if narrowing else ""), n_prompts)
        for rows in prompts.blocks(chunk):
            start = rows.start
            block = prompts[rows]
            vectors = block.vectors
            sims, score = self._scores(block, narrowing)
            if narrowing is not None:
                score = self._evidence(score, block, rows, narrowing, boosts, prior)
                if context is not None and narrowing.uses_context:
                    score = score + narrowing.context_weights(prompts.has_role[rows]) * context.of(score, rows)
                if instructions is not None and (narrowing.instruction or narrowing.instruction_without_role):
                    told, _ = instructions.of(rows)  # zeros where a benchmark has none: its scores keep their bits
                    score = score + narrowing.instruction_weights(prompts.has_role[rows]) * told
                occupation_p, family_p = self._narrow(score, narrowing)
                ranked = score + narrowing.family * np.log(np.maximum(family_p[:, self.occupation_family], 1e-12))
                order = np.argsort(-ranked, axis=1, kind="stable")[:, :n_occupations]
                probability[rows] = np.take_along_axis(occupation_p, order, axis=1)
                family_probability[rows] = family_p[np.arange(len(order)), self.occupation_family[order[:, 0]]]
                scores[rows] = np.take_along_axis(ranked, order, axis=1)
            else:
                order = np.argsort(-score, axis=1, kind="stable")[:, :n_occupations]
                scores[rows] = np.take_along_axis(score, order, axis=1)
            occupations[rows] = order
            if instructions is not None and narrowing is not None and narrowing.instruction_tasks:
                sims = instructions.blend(sims, rows, narrowing.instruction_tasks)
            nearest = np.argpartition(-sims, n_nearest - 1, axis=1)[:, :n_nearest] if n_nearest < sims.shape[1] else np.tile(np.arange(sims.shape[1]), (len(sims), 1))
            for row in range(len(vectors)):
                own = [self.tasks_of[o][np.argsort(-sims[row, self.tasks_of[o]], kind="stable")[:per_occupation]] for o in order[row]]
                pool = np.unique(np.concatenate([*own, nearest[row]]))
                ranked_pool = pool[np.argsort(-sims[row, pool], kind="stable")]
                lengths[start + row] = len(ranked_pool)
                flat_positions[start + row, : len(ranked_pool)] = ranked_pool
                flat_similarity[start + row, : len(ranked_pool)] = sims[row, ranked_pool]
            meter.update(len(vectors))
        meter.close()
        positions = [flat_positions[i, : lengths[i]] for i in range(n_prompts)]
        similarity = [flat_similarity[i, : lengths[i]] for i in range(n_prompts)]
        return Candidates(positions, similarity, occupations, scores, probability, family_probability)

    def _narrow(self, score: np.ndarray, narrowing: Narrowing) -> tuple[np.ndarray, np.ndarray]:
        """Occupation probabilities (softmax at the narrowing's temperature) and family probabilities."""
        logits = score / narrowing.temperature
        logits = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        family_p = np.zeros((len(score), len(self.families)))
        for f in range(len(self.families)):
            family_p[:, f] = p[:, self.occupation_family == f].sum(axis=1)
        return p, family_p
