"""Keys of two integer columns as one integer, for the lookups and groupings of the label steps: at
a million prompts a pandas merge or groupby on two columns is most of what these steps cost, and the
steps' tables carry integer codes (analysis/step.py)."""

from __future__ import annotations

import numpy as np

# A packed key is first * radix + second in an int64; this bound keeps it from overflowing.
_LIMIT = 2**62


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
    if max(int(first.max()) for first, _ in present) >= _LIMIT // radix:
        return None
    return [first.astype(np.int64) * radix + second for first, second in pairs]
