"""The labeling tables' rows: label rows and per-prompt judgement records from retrieved prompts and a
judge's choices (`label_rows`, `judgement_rows`), and the default judge's candidate rows (`candidate_rows`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .judges import Judgement
from .prompt_retrieval import Retrieved
from .retrieval import TaskIndex

LABEL_COLUMNS = ["benchmark", "prompt_id", "task_id", "rank", "score", "labeler", "prompt_hash"]
# `confidence` came last (judge v4): tables written before it get the column by migration (label_files.write_partitions).
JUDGEMENT_COLUMNS = ["benchmark", "prompt_id", "labeler", "prompt_hash", "status", "reason", "n_labels", "n_chunks", "confidence"]
# The default judge's candidates, one row per (prompt, candidate occupation, candidate task of it), with
# the judge's own abstention bars (the same on every row of a labeler): the label-uncertainty band
# re-draws a prompt's labels from these (analysis/uncertainty.py).
CANDIDATE_COLUMNS = [
    "benchmark", "prompt_id", "labeler", "prompt_hash", "occupation_rank", "onet_soc_code", "occupation_probability",
    "task_rank", "task_id", "similarity", "abstain_below", "min_similarity",
]


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
