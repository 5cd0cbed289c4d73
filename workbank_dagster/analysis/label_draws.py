"""The re-drawing of the label-uncertainty band (uncertainty.py): every labeled prompt's possible
label sets (`label_sets`: its own, then one per other candidate occupation), the draws that keep a
prompt's labels with its calibrated probability (calibration.py) or move them to another candidate
(`draw_shares`), and the band, the central quantiles of the draws (`band`).
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
from scipy import sparse

from .calibration import Calibration, _expit, _logit
from .keys import packed_pairs, positions_among

BAND_LEVEL = 0.95


@dataclass
class LabelSets:
    """Every labeled prompt's possible label sets: its own (first), then one per other candidate
    occupation. `incidence` is sets x tasks (1 where the set holds the task, columns in the order of
    the task frame); `prompt` the prompt (0..n-1) of each set; `own` marks each prompt's own set;
    `share` each alternative's share of the probability of being wrong (its occupation's probability
    over the alternatives'); `confidence` each prompt's raw confidence."""

    incidence: sparse.csr_matrix
    prompt: np.ndarray
    own: np.ndarray
    share: np.ndarray
    confidence: np.ndarray

    @property
    def n_prompts(self) -> int:
        return len(self.confidence)

    def probabilities(self, q: np.ndarray) -> np.ndarray:
        """Each set's probability (sets x columns of q) when each prompt's own labels are right with
        probability q[prompt] (prompts x columns); a prompt without alternatives keeps its own."""
        keep = np.where(self.has_alternative[:, None], q, 1.0)[self.prompt]
        return np.where(self.own[:, None], keep, (1.0 - keep) * self.share[:, None])

    @cached_property
    def own_set(self) -> np.ndarray:
        """Each prompt's own set (sets are grouped by prompt, its own first)."""
        return np.flatnonzero(self.own)

    @cached_property
    def n_alternatives(self) -> np.ndarray:
        """Each prompt's alternative sets."""
        return np.bincount(self.prompt[~self.own], minlength=self.n_prompts)

    @cached_property
    def has_alternative(self) -> np.ndarray:
        return self.n_alternatives > 0

    @cached_property
    def alternative_bounds(self) -> np.ndarray:
        """prompts x (most alternatives of a prompt): each prompt's running sum of its alternatives'
        shares, the last one (and the padding after it) exactly 1.0."""
        alternative = ~self.own
        position = np.arange(len(self.own)) - self.own_set[self.prompt] - 1  # 0 for a prompt's first alternative
        width = int(position[alternative].max()) + 1 if alternative.any() else 1
        shares = np.zeros((self.n_prompts, width))
        shares[self.prompt[alternative], position[alternative]] = self.share[alternative]
        bounds = np.cumsum(shares, axis=1)
        bounds[np.arange(width)[None, :] >= (self.n_alternatives - 1)[:, None]] = 1.0
        return bounds

    @cached_property
    def bounds_by_position(self) -> np.ndarray:
        """`alternative_bounds` transposed (positions x prompts), each position's bounds contiguous."""
        return np.ascontiguousarray(self.alternative_bounds.T)

    def moves(self, q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The prompts that leave their own set (ascending) and the set each moves to, by the rule of
        `choose`. Only the moved prompts are looked at past the comparison with q: at a million
        prompts the bounds of the moved (a third of them) compared a position at a time took 4 ms a
        draw where a prompts x positions comparison summed along its rows took 11."""
        keep = q if self.every_prompt_has_alternative else np.where(self.has_alternative, q, 1.0)
        moved = np.flatnonzero(u > keep)
        kept = keep[moved]
        within = (u[moved] - kept) / (1.0 - kept)
        step = np.zeros(len(moved), dtype=np.int64)
        for bounds in self.bounds_by_position:
            step += bounds[moved] < within
        return moved, self.own_set[moved] + 1 + np.minimum(step, len(self.bounds_by_position) - 1)

    @cached_property
    def every_prompt_has_alternative(self) -> bool:
        return bool(self.has_alternative.all())

    def choose(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """The set each prompt draws, with the probabilities of `probabilities(q)`: given u uniform on
        [0, 1) per prompt, its own set when u <= q (always, for a prompt without alternatives), else the
        alternative whose interval of the running share sum holds (u - q) / (1 - q). Per prompt, not
        per set: at a million prompts a draw over every set took 84 ms, 200 times."""
        chosen = self.own_set.copy()
        moved, to = self.moves(q, u)
        chosen[moved] = to
        return chosen

    @cached_property
    def set_columns(self) -> np.ndarray:
        """sets x (most tasks of a set): each set's task columns, in the incidence's order, padded with
        the column count (a bin past the last task). The re-drawing counts the tasks of the sets it
        moves prompts to and from with one gather and a bincount: scipy's row selection, which builds a
        matrix, took 28 ms a draw at a million prompts, these 10 (the smallest integer type that holds
        the columns: the gather reads a quarter of the bytes of int64)."""
        n_sets, n_tasks = self.incidence.shape
        lengths = np.diff(self.incidence.indptr)
        width = int(lengths.max()) if n_sets else 0
        padded = np.full((n_sets, max(width, 1)), n_tasks, dtype=np.min_scalar_type(n_tasks))
        position = np.arange(self.incidence.nnz) - np.repeat(self.incidence.indptr[:-1], lengths)
        padded[np.repeat(np.arange(n_sets), lengths), position] = self.incidence.indices
        return padded

    def task_counts(self, sets: np.ndarray) -> np.ndarray:
        """How many of `sets` hold each task (aligned to the incidence's columns)."""
        n_tasks = self.incidence.shape[1]
        return np.bincount(self.set_columns[sets].ravel(), minlength=n_tasks + 1)[:n_tasks]


def _rows_of(table: pd.DataFrame, frame: pd.DataFrame, key: list[str]) -> np.ndarray:
    """The row of `table` (one a key) that holds each row's `key` (two columns) of `frame`, -1 where
    none does: what an inner merge on `key` pairs, in `frame`'s order. Integer keys (the step's
    codes) are looked up as one integer: at a million prompts the merge of 3.9 M candidates on two
    columns took 0.8 s, this 0.3. A run of equal keys is looked up once: the step's frames come
    ordered by prompt (9.3 M candidates in some 0.9 M runs), and the lookup of every row took 0.5 s
    where that of the runs' first rows and a repeat took 0.15 (any order gives the same rows)."""
    known, wanted = [table[c].to_numpy() for c in key], [frame[c].to_numpy() for c in key]
    packed = packed_pairs(tuple(known), tuple(wanted))
    if packed is None:
        return pd.MultiIndex.from_arrays(known).get_indexer(pd.MultiIndex.from_arrays(wanted))
    keys = packed[1]
    start = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, dtype=np.int64)
    return np.repeat(pd.Index(packed[0]).get_indexer(keys[start]), np.diff(np.r_[start, len(keys)]))


def _first_per_group(group: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups (sorted), each one's first value that is not NaN in row order (NaN when it has
    none), and each row's group (its position among them): pandas' groupby(...).first() on integer
    group codes, without the frame. Groups already in order (the step's candidates come ordered by
    prompt and occupation rank) are not sorted: at a million prompts the stable argsort of 9.3 M
    keys and the gathers through it took 1.7 s, the check and the sorted path 0.2 to 0.5."""
    ordered_already = bool((group[1:] >= group[:-1]).all())
    order = None if ordered_already else np.argsort(group, kind="stable")
    ordered = group if order is None else group[order]
    new = np.ones(len(ordered), dtype=bool)
    new[1:] = ordered[1:] != ordered[:-1]
    keys = ordered[new]
    if order is None:
        position = np.cumsum(new) - 1
        if not np.isnan(values).any():  # every row present: each group's first row is its first value
            return keys, values[new], position
        present = np.flatnonzero(~np.isnan(values))
    else:
        position = np.empty(len(group), dtype=np.int64)
        position[order] = np.cumsum(new) - 1
        present = order[~np.isnan(values[order])]
    first = np.full(len(keys), np.nan)
    if len(present):
        starts = np.ones(len(present), dtype=bool)
        starts[1:] = position[present[1:]] != position[present[:-1]]
        first[position[present[starts]]] = values[present[starts]]
    return keys, first, position


def _incidence(rows: list[np.ndarray], columns: list[np.ndarray], shape: tuple[int, int]) -> sparse.csr_matrix:
    """The 0/1 matrix with a 1 at each (row, column) of the parts (a row's entries all in one part):
    scipy's csr_matrix from the coordinates, its data set to 1.0 (repeats summed, then 1). When each
    part's rows are in order (the step's labels and candidates come ordered by prompt), the rows are
    laid out by a count per row instead, the same arrays once scipy sorts each row's columns and sums
    repeats: at a million prompts scipy's conversion of 11.6 M coordinates took 0.6 to 1.0 s."""
    if not all(len(part) < 2 or bool((part[1:] >= part[:-1]).all()) for part in rows):
        incidence = sparse.csr_matrix((np.ones(sum(map(len, rows))), (np.concatenate(rows), np.concatenate(columns))), shape=shape)
        incidence.data[:] = 1.0
        return incidence
    # int32 where scipy would convert to it (every index and count below 2**31), so it does not copy
    # 11.6 M indices, and each row's length from its run, not a bincount of the parts concatenated: at
    # a million prompts label_sets went from 2.26 s to 1.30 (medians of three alternated runs).
    n_entries = sum(map(len, rows))
    index = np.int32 if max(n_entries, *shape) < 2**31 else np.int64
    runs = [np.flatnonzero(np.r_[True, part[1:] != part[:-1]]) if len(part) else np.zeros(0, dtype=np.int64) for part in rows]
    lengths = np.zeros(shape[0], dtype=index)
    for part, start in zip(rows, runs):
        lengths[part[start]] = np.diff(np.r_[start, len(part)])  # a row's entries are one run of its part
    indptr = np.zeros(shape[0] + 1, dtype=index)
    np.cumsum(lengths, out=indptr[1:])
    indices = np.empty(n_entries, dtype=index)
    for part, column, start in zip(rows, columns, runs):
        # Each entry goes to its row's start plus its place in the row's run.
        indices[np.arange(len(part), dtype=index) + np.repeat((indptr[part[start]] - start).astype(index), np.diff(np.r_[start, len(part)]))] = column
    incidence = sparse.csr_matrix((np.ones(len(indices)), indices, indptr), shape=shape)
    incidence.sum_duplicates()
    incidence.data[:] = 1.0
    return incidence


def label_sets(labels: pd.DataFrame, judgements: pd.DataFrame, candidates: pd.DataFrame, task_ids: np.ndarray) -> LabelSets:
    """The label sets of every prompt the judge labeled. `labels`: benchmark, prompt_id, task_id
    (one labeler); `judgements`: benchmark, prompt_id, status, confidence (one row a prompt);
    `candidates`: benchmark, prompt_id, occupation_rank, occupation_probability, task_rank, task_id;
    `task_ids` the columns. An alternative set holds its occupation's first k candidate tasks, k the
    prompt's own labels. Sets are numbered prompt by prompt, its own first, then its occupations by rank."""
    key = ["benchmark", "prompt_id"]
    labeled = judgements.loc[judgements["status"] == "labeled", [*key, "confidence"]].sort_values(key).reset_index(drop=True)
    n_prompts = len(labeled)
    own_prompt = _rows_of(labeled, labels, key)
    own_column = positions_among(labels["task_id"], task_ids)
    own_kept = (own_prompt >= 0) & (own_column >= 0)
    own_prompt, own_column = own_prompt[own_kept], own_column[own_kept]
    k = np.bincount(own_prompt, minlength=n_prompts)
    # The candidates a set takes, kept by one mask over the columns (another occupation's, of a
    # labeled prompt, within its k, of a listed task) and the columns masked once, not at all when
    # every row is kept (the step reads only such rows): at a million prompts a frame of the other
    # occupations' rows and three masks of 9.3 M rows took 0.8 s.
    alt_prompt = _rows_of(labeled, candidates, key)
    alt_column = positions_among(candidates["task_id"], task_ids)
    alt_rank = candidates["occupation_rank"].to_numpy(dtype=np.int64)
    # np.append: a candidate of no labeled prompt (-1) meets a k of 0, and is dropped by its -1 anyway.
    alt_kept = (alt_rank > 1) & (alt_prompt >= 0) & (candidates["task_rank"].to_numpy() <= np.append(k, 0)[alt_prompt]) & (alt_column >= 0)
    alt_probability = candidates["occupation_probability"].to_numpy(dtype=float)
    if not alt_kept.all():
        alt_prompt, alt_column, alt_rank, alt_probability = alt_prompt[alt_kept], alt_column[alt_kept], alt_rank[alt_kept], alt_probability[alt_kept]
    # Each (prompt, occupation) as one integer (ranks below `radix`), in the sets' order; a prompt's
    # own set comes before its occupations, so an occupation's set is its position plus the own sets
    # up to its prompt's, and a prompt's own set its number plus the occupations of earlier prompts.
    radix = int(alt_rank.max()) + 1 if len(alt_rank) else 1
    occupation_key, probability, occupation_of = _first_per_group(alt_prompt * radix + alt_rank, alt_probability)
    occupation_prompt = occupation_key // radix
    occupations = pd.DataFrame({"prompt": occupation_prompt, "occupation_probability": probability})
    total = occupations.groupby("prompt")["occupation_probability"].transform("sum")
    count = occupations.groupby("prompt")["occupation_probability"].transform("size")
    share = np.where(total > 0, occupations["occupation_probability"] / total.where(total > 0, 1.0), 1.0 / count)
    prompts = np.arange(n_prompts, dtype=np.int64)
    own_row = prompts + np.searchsorted(occupation_prompt, prompts)
    occupation_row = np.arange(len(occupation_key), dtype=np.int64) + occupation_prompt + 1
    n_sets = n_prompts + len(occupation_key)
    prompt, own, set_share = np.empty(n_sets, dtype=np.int64), np.zeros(n_sets, dtype=bool), np.zeros(n_sets)
    prompt[own_row], prompt[occupation_row] = prompts, occupation_prompt
    own[own_row] = True
    set_share[occupation_row] = share
    incidence = _incidence([own_row[own_prompt], occupation_row[occupation_of]], [own_column, alt_column], (n_sets, len(task_ids)))
    confidence = labeled["confidence"].astype(float).fillna(1.0).to_numpy()
    return LabelSets(incidence, prompt, own, set_share, confidence)


# The re-drawing holds a few sets x draws arrays at once (probabilities, their running sum, the
# uniforms, the choice): the draws go in chunks of columns that keep each such array near this many
# bytes, so memory stays flat as prompts grow (200 draws at once took 4.8 GB at 100,000 prompts).
DRAW_CHUNK_BYTES = 16 * 2**20
# The draws are counted on this many threads, each draw's counts its own column: the gathers, the
# comparisons and the bincounts release the GIL, and at a million prompts 40 draws took 1.0 s on two
# threads where one thread took 1.9 (the same counts). The random numbers are drawn in one thread, in
# order, so the draws do not depend on the threads; a thread holds one draw's moved prompts at a time.
DRAW_THREADS = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


def draws_per_chunk(n_sets: int, draws: int, chunk_bytes: int = DRAW_CHUNK_BYTES) -> int:
    """How many draws (columns) one chunk of the re-drawing takes for `n_sets` label sets."""
    return max(1, min(draws, chunk_bytes // (8 * max(n_sets, 1))))


def draw_shares(sets: LabelSets, calibration: Calibration, hours: np.ndarray, occupation: np.ndarray, threshold: int, *,
                draws: int = 200, seed: int = 20261204, chunk_bytes: int = DRAW_CHUNK_BYTES) -> dict[str, np.ndarray]:
    """`draws` re-drawings of every labeled prompt's labels: per draw, the uncovered share of the
    hours (aligned to the incidence's task columns), the tasks labeled and covered, and the
    occupations (`occupation`: each task column's occupation code) with a covered task. The draws
    are made a chunk of columns at a time (draws_per_chunk), so memory does not grow with `draws`."""
    rng = np.random.default_rng(seed)
    if calibration.fitted:
        a, b = rng.multivariate_normal([calibration.intercept, calibration.slope], calibration.cov, size=draws).T
    else:
        a, b = np.full(draws, calibration.intercept), np.full(draws, calibration.slope)
    logit_confidence = _logit(sets.confidence)[:, None]
    n_tasks = sets.incidence.shape[1]
    own_counts = np.asarray(sets.incidence.T @ sets.own.astype(float))
    counts = np.empty((n_tasks, draws))  # tasks x draws

    def count(draw: int, q: np.ndarray, u: np.ndarray) -> None:
        # A draw's counts are the own labels' counts, with the moved prompts' own sets taken out
        # and the sets they moved to put in.
        moved, to = sets.moves(q, u)
        counts[:, draw] = own_counts + sets.task_counts(to) - sets.task_counts(sets.own_set[moved])

    step = draws_per_chunk(sets.incidence.shape[0], draws, chunk_bytes)
    # The calibration unfitted, (a, b) is the same every draw, and so is q: it is computed again only
    # when a chunk's (a, b) differ from the last chunk's. At a million prompts (a chunk a draw) q took
    # some 5 ms a draw of the one thread that draws, and draw_shares went from 4.35 s to 3.76 s
    # (medians of three alternated runs; the same q, so the same draws).
    coefficients, q = None, None
    with ThreadPoolExecutor(max_workers=DRAW_THREADS) as pool:
        # The thread that draws runs ahead of the counting threads by at most two draws each, and
        # waits for the oldest draw only, where it waited for every draw it had sent (and the
        # counting threads for it): at a million prompts draw_shares went from 5.52 s to 4.35 s
        # (medians of three alternated runs on two cores). Memory stays a few draws' q and u.
        pending: deque = deque()
        for start in range(0, draws, step):
            columns = slice(start, min(start + step, draws))
            if coefficients is None or not (np.array_equal(coefficients[0], a[columns]) and np.array_equal(coefficients[1], b[columns])):
                coefficients, q = (a[columns], b[columns]), _expit(a[None, columns] + b[None, columns] * logit_confidence)
            u = rng.random((sets.n_prompts, q.shape[1]))  # in the order of the chunks: the same draws however many threads count them
            for column in range(q.shape[1]):
                pending.append(pool.submit(count, start + column, q[:, column], u[:, column]))
                while len(pending) > 2 * DRAW_THREADS:
                    pending.popleft().result()
        while pending:
            pending.popleft().result()
    covered = counts >= threshold
    has_hours = ~np.isnan(hours)
    weights = np.where(has_hours, hours, 0.0)
    shares = (weights[:, None] * ~covered).sum(axis=0) / weights.sum()
    codes, occupation_index = np.unique(occupation, return_inverse=True)
    by_occupation = sparse.csr_matrix((np.ones(len(occupation_index)), (occupation_index, np.arange(len(occupation_index)))), shape=(len(codes), len(occupation_index)))
    occupations = (np.asarray(by_occupation @ covered.astype(float)) > 0).sum(axis=0)
    return {"share": shares, "tasks": covered.sum(axis=0), "occupations": occupations, "labeled": (counts > 0).sum(axis=0)}


def band(values: np.ndarray, level: float = BAND_LEVEL) -> tuple[float, float]:
    alpha = (1 - level) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)
