"""One way to know what is stale: the fingerprint of a cached step, kept in its materialization.

Seven steps skip their work when nothing they depend on changed: the source loads, the occupation
prior, the embedded labels, the dbt models, the analysis steps, the data dictionary's dbt docs and
the report page. Each records its key in one place, the metadata of its own Dagster
materialization (`inputs_sha256`; per partition, a JSON object keyed by partition), and reads it
back from there (`last_fingerprint`, `recorded_per_partition`) before it decides. Each used to hash
its own list of files, and keep it in its own store (a warehouse table, a key inside a `.npz`,
sidecar files), and lists go stale (the dictionary's left out `analysis/columns.py`, so an edited
column description never reached DATA_DICTIONARY.md). Here every one of them hashes the same things:

- **code**: the code version its asset declares to Dagster (code_version.py: derived from the
  definitions its function reaches, read without comments or docstrings), so the step skips
  exactly when Dagster would not call it stale for its code;
- **inputs**: its declared input files, frames and settings, passed in by the step.

The embedding and judgement stores are not staleness checks: they are content-addressed (a text's
vector, a prompt's judgement), and stay where they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd

# The metadata entry where a cached step records its key.
INPUTS_METADATA = "inputs_sha256"
# ... and whether it did its work this time (true) or kept what its key names (false); a
# partitioned step records the partitions it worked, as a list.
RECOMPUTED_METADATA = "recomputed"


def fingerprint(*, code: str, inputs: Iterable[object] = ()) -> str:
    """The key of a cached step: its code version (code_version.py: what its asset declares to
    Dagster) and its inputs.

    An input may be a frame (its columns, types and content), a file path (its bytes), or any
    JSON-able value (settings, versions, row counts). A step reads its input frames the same way
    every run, so their types are part of what they are (`_update_with_frame`)."""
    return _digest(code, inputs, exact_frames=True)


def _digest(code: str, parts: Iterable[object], *, exact_frames: bool) -> str:
    digest = hashlib.sha256(code.encode())
    for part in parts:
        if isinstance(part, pd.DataFrame) and exact_frames:
            _update_with_frame(digest, part)
        elif isinstance(part, pd.DataFrame):
            digest.update(repr(list(part.columns)).encode())
            digest.update(pd.util.hash_pandas_object(part, index=False).to_numpy().tobytes())
        elif isinstance(part, Path):
            digest.update(part.read_bytes())
        else:
            digest.update(json.dumps(part, sort_keys=True, default=str).encode())
        digest.update(b"\x1f")
    return digest.hexdigest()


def _update_with_frame(digest, frame: pd.DataFrame) -> None:
    """Feed `frame` to `digest`: its shape, columns and dtypes, then each column. A column of a
    NumPy number, boolean or time type is fed its bytes as they are; any other (strings, objects,
    pandas' nullable types) pandas' hash of each value. At a million prompts the label-uncertainty
    step's 9.3 M candidates took 2.2 s through pandas' hash of every row; the raw bytes of a
    numeric column hash at some 1 GB/s (sha256 of 372 MB of floats: 0.38 s where pandas' row hash
    of the same took 2.8 s)."""
    digest.update(repr((frame.shape, list(frame.columns), [str(dtype) for dtype in frame.dtypes])).encode())
    for position in range(frame.shape[1]):
        column = frame.iloc[:, position]
        if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biufcmM":
            digest.update(np.ascontiguousarray(column.to_numpy()))
        else:
            digest.update(pd.util.hash_pandas_object(column, index=False).to_numpy().tobytes())
        digest.update(b"\x1e")


def content_version(*parts: object) -> dg.DataVersion:
    """The data version an asset reports of what it wrote: a digest of its tables (columns and
    content), files (bytes) or values, as `fingerprint` hashes inputs. The same content gives the
    same version whichever run wrote it, so an asset that wrote again what it held leaves what
    reads it fresh in Dagster's eyes. A frame is hashed by its values as pandas hashes them, not
    its types: a step that keeps its tables reads them back from the warehouse (an int32 column,
    a string one) where the step that wrote them held other types (int64, object), and the same
    content must give the same version (`fingerprint`'s byte-wise hashing of a numeric column did
    not: tests/scenarios/test_idempotency.py)."""
    return dg.DataVersion(_digest("", parts, exact_frames=False))


def last_fingerprint(instance, asset_key) -> tuple[str | None, dict]:
    """The fingerprint an asset's last materialization recorded (metadata `inputs_sha256`), and that
    materialization's metadata: (None, {}) when it has none. A step that finds its current
    fingerprint there, and its tables in place, keeps them (analysis steps, dbt models)."""
    materialization = last_materialization(instance, asset_key)
    metadata = dict(materialization.metadata) if materialization else {}
    return getattr(metadata.get(INPUTS_METADATA), "value", None), metadata


def last_materialization(instance, asset_key) -> dg.AssetMaterialization | None:
    """An asset's last materialization (its metadata, and its tags: the data version it reported), or None."""
    event = instance.get_latest_materialization_event(asset_key)
    return event.asset_materialization if event else None


def recorded_per_partition(instance, asset_key, name: str, partitions: Iterable[str]) -> dict[str, object]:
    """Per partition, its entry in the JSON metadata `name` of that partition's last materialization.

    A partitioned step that runs several partitions at once records one JSON object keyed by
    partition (the source loads, the embedded labels' keys); a partition whose last materialization
    has no entry of its own is left out, and so is worked again."""
    wanted = set(partitions)
    latest: dict[str, object] = {}  # partition -> its last materialization
    cursor = None
    # Newest first, for all the partitions at once: a run that materialized them together (a
    # single-run backfill) is one page, where one query per partition took ~10 ms each.
    while wanted - set(latest):
        page = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=sorted(wanted)), limit=max(len(wanted), 1), cursor=cursor
        )
        for record in page.records:
            materialization = record.asset_materialization
            if materialization is not None and materialization.partition in wanted:
                latest.setdefault(materialization.partition, materialization)
        if not page.has_more:
            break
        cursor = page.cursor
    out: dict[str, object] = {}
    for partition, materialization in latest.items():
        value = getattr(materialization.metadata.get(name), "value", None)
        if isinstance(value, dict) and partition in value:
            out[partition] = value[partition]
    return out
