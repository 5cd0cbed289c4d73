"""The labeling tables' rows: label rows and per-prompt judgement records from retrieved prompts and a
judge's choices (`label_rows`, `judgement_rows`), and the default judge's candidate rows (`candidate_rows`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import yaml

from ..settings import DBT_PROJECT_DIR
from .judges import Judgement
from .prompt_retrieval import Retrieved
from .retrieval import TaskIndex

# The judge tables' columns are declared once, with their SQL types, as the columns of dbt's sources
# for them: the staging models cast the files with them (macros/typed_table.sql, judge_table), and
# the rows below are written with them. The rows are made by name and must carry exactly the declared
# columns (`typed`), so a renamed, added or dropped column fails here until the code that makes them
# follows, and that edit moves the writers' code versions (code_reach.py reads Python, not YAML);
# an edit of order or type alone changes nothing dbt builds (it reads the files by name and casts).
JUDGE_SOURCES = DBT_PROJECT_DIR / "models" / "staging" / "__sources.yml"
# The pandas type a file's column is written with, by its declared SQL type (strings stay as they are).
PANDAS_TYPES = {"integer": "Int64", "double precision": "Float64"}


def declared_columns(kind: str) -> dict[str, str]:
    """name -> SQL type of the judge tables of one kind ('labels', 'judgements'), in order, as the
    labeling source declares them: every judge writes the same columns, so its tables must agree."""
    (labeling,) = [source for source in yaml.safe_load(JUDGE_SOURCES.read_text(encoding="utf-8"))["sources"] if source["name"] == "labeling"]
    declared = {
        table["name"]: {column["name"]: column["data_type"] for column in table.get("columns", [])}
        for table in labeling["tables"]
        if table["name"].endswith(f"_{kind}")
    }
    (columns, *others) = declared.values()
    if not columns or any(other != columns for other in others):
        raise ValueError(f"{JUDGE_SOURCES}: the judges' {kind} tables must declare the same typed columns, found {declared}")
    return columns


def typed(frame: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """`frame`'s declared columns, in their order, with their pandas types: a column it lacks, or one
    it has that is not declared, is an error (the file would not be what dbt reads)."""
    if set(frame.columns) != set(columns):
        raise ValueError(f"columns {sorted(frame.columns)} are not the declared {list(columns)} ({JUDGE_SOURCES})")
    return frame[list(columns)].astype({name: PANDAS_TYPES[sql] for name, sql in columns.items() if sql in PANDAS_TYPES})


LABEL_TYPES = declared_columns("labels")
JUDGEMENT_TYPES = declared_columns("judgements")
LABEL_COLUMNS = list(LABEL_TYPES)
# `confidence` came last (judge v4): tables written before it get the column by migration (label_files.write_partitions).
JUDGEMENT_COLUMNS = list(JUDGEMENT_TYPES)
# The default judge's candidates, one row per (prompt, candidate occupation, candidate task of it), with
# the judge's own abstention bars (the same on every row of a labeler): the label-uncertainty band
# re-draws a prompt's labels from these (analysis/uncertainty.py). Declared as the judge tables are.
CANDIDATE_TYPES = declared_columns("candidates")
CANDIDATE_COLUMNS = list(CANDIDATE_TYPES)


def empty_labels() -> pd.DataFrame:
    return typed(pd.DataFrame({name: pd.array([], dtype="string") for name in LABEL_COLUMNS}), LABEL_TYPES)


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
            rows.append({"benchmark": row.benchmark, "prompt_id": row.prompt_id, "task_id": task_id, "rank": rank, "score": score,
                         "labeler": labeler, "prompt_hash": row.prompt_hash})
        if statuses is not None:
            status, reason = statuses[i]
        else:
            status, reason = ("labeled", "") if labels else ("no_match", "no candidate task similar enough")
        confidence = confidences[i] if confidences is not None else None
        judgements.append({"benchmark": row.benchmark, "prompt_id": row.prompt_id, "labeler": labeler, "prompt_hash": row.prompt_hash,
                           "status": status, "reason": reason, "n_labels": len(labels), "n_chunks": retrieved.chunk_counts[i], "confidence": confidence})
    for row in retrieved.unreadable.itertuples(index=False):
        judgements.append({"benchmark": row.benchmark, "prompt_id": row.prompt_id, "labeler": labeler, "prompt_hash": row.prompt_hash,
                           "status": "unlabeled", "reason": row.reason, "n_labels": 0, "n_chunks": 0, "confidence": None})
    labels = typed(pd.DataFrame(rows), LABEL_TYPES) if rows else empty_labels()
    judged = typed(pd.DataFrame(judgements) if judgements else pd.DataFrame(columns=JUDGEMENT_COLUMNS), JUDGEMENT_TYPES)
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
                rows.append({"benchmark": prompt.benchmark, "prompt_id": prompt.prompt_id, "labeler": labeler, "prompt_hash": prompt.prompt_hash,
                             "occupation_rank": rank, "onet_soc_code": code, "occupation_probability": float(probability), "task_rank": task_rank,
                             "task_id": int(index.task_ids[positions[i]]), "similarity": float(sims[i]), "abstain_below": abstain_below,
                             "min_similarity": min_similarity})
    frame = typed(pd.DataFrame(rows) if rows else pd.DataFrame(columns=CANDIDATE_COLUMNS), CANDIDATE_TYPES)
    for name in (name for name, sql in CANDIDATE_TYPES.items() if sql not in PANDAS_TYPES):  # the strings
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
