"""Keys of two integer columns as one integer, for the lookups and groupings of the label steps: at
a million prompts a pandas merge or groupby on two columns is most of what these steps cost, and the
steps' tables carry integer codes (analysis/step.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

# A packed key is first * radix + second in an int64; this bound keeps it from overflowing.
PACKED_LIMIT = 2**62


def packed_pairs(*pairs: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray] | None:
    """Each (first, second) pair of columns as one int64 a row, `first * radix + second`, with one
    radix for every pair (the largest `second` + 1), so equal pairs are equal integers within and
    across the pairs; None when a column is not integers, holds a negative, or a key would overflow
    (the caller then keys on both columns). Empty pairs pack to empty arrays."""
    columns = [column for pair in pairs for column in pair]
    if not all(np.issubdtype(column.dtype, np.integer) for column in columns):
        return None
    present = [pair for pair in pairs if len(pair[0])]
    if not present:
        return [np.zeros(0, dtype=np.int64) for _ in pairs]
    if min(min(int(first.min()), int(second.min())) for first, second in present) < 0:
        return None
    radix = max(int(second.max()) for _, second in present) + 1
    if max(int(first.max()) for first, _ in present) >= PACKED_LIMIT // radix:
        return None
    return [first.astype(np.int64) * radix + second for first, second in pairs]


def distinct_pairs(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The distinct (first, second) pairs of two non-empty integer columns as sorted keys
    `first * radix + (second - low)`, with `low` (the smallest `second`) and `radix`.

    Sorting, not hashing: the label steps' rows come ordered by prompt (`first`), which the stable
    sort (timsort) takes almost as it finds them; at a million prompts 0.06 to 0.09 s against 0.38
    to 0.49 for pd.unique (medians of five)."""
    low = int(second.min())
    radix = int(second.max()) - low + 1
    key = np.sort(first * radix + (second - low), kind="stable")
    return key[np.r_[True, key[1:] != key[:-1]]], low, radix


# The largest id + 1 that `positions_among` looks up in a table (8 bytes an id: 8 MB).
ID_TABLE_LIMIT = 2**20


def positions_among(values, ids) -> np.ndarray:
    """Each of `values`' position among `ids` (distinct integers), -1 for one they lack. Task ids are
    small non-negative integers (18,796 of them up to 24,001): they are looked up in a table indexed
    by the id, where a hashed lookup of the label steps' 9.3 M candidates at a million prompts took
    0.23 s (the table, labels and candidates, 0.06). Other ids go through pandas' index."""
    values = np.asarray(values)
    values = values if np.issubdtype(values.dtype, np.integer) else values.astype(np.int64)
    ids = np.asarray(ids, dtype=np.int64)
    if not (len(ids) and len(values) and 0 <= ids.min() and ids.max() < ID_TABLE_LIMIT and len(np.unique(ids)) == len(ids)):
        return pd.Index(ids).get_indexer(pd.Index(values.astype(np.int64)))
    table = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    table[ids] = np.arange(len(ids))
    if 0 <= values.min() and values.max() < len(table):
        return table[values]
    inside = (values >= 0) & (values < len(table))
    return np.where(inside, table[np.where(inside, values, 0)], -1)
