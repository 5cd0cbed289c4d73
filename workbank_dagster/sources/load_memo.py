"""Read an unchanged source back from where its load wrote it instead of parsing its file again.

A warm run used to parse and validate every source file again (about 8 of its 60 seconds). Now
each load records what it read in its own materialization, as every cached step records its key
(fingerprint.py): the metadata `source_loads` holds, per partition ('' for a whole table), the
load's key (`inputs_sha256`: the file's SHA-256 and the code version of the loading steps and of
what they reach), the file's SHA-256, path (relative to the source folder) and size, the
row count, and the parsed frame's dtypes and attrs. `raw/source_files` publishes the files from
there.

A later load whose key equals the one its last materialization recorded, and whose rows are still
there, exactly that many with those columns (the warehouse table of a whole-table source, the
Parquet file of a benchmark's partition: partition_files.py), reads those rows back: the same frame the parser
produced, so the same metadata. Anything else parses as before: a changed file, changed code, a
warehouse rebuilt or emptied, no materialization yet. A run that fails records nothing, so its
next load parses. The one thing the check cannot see is a table rewritten by hand with the same
row count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import dagster as dg
import pandas as pd

from ..code_version import code_version
from ..fingerprint import INPUTS_METADATA, fingerprint, last_fingerprint, recorded_per_partition

LOADS_METADATA = "source_loads"
WHOLE_TABLE = ""  # the partition of an unpartitioned source's record
# The steps that load sources: the code versions of their functions and of what those reach
# (code_version.py) are "the parser".
LOADERS = (
    ("workbank_dagster.sources.assets", "_raw_asset"),
    ("workbank_dagster.sources.registry", "SOURCES"),  # each source's reader
    ("workbank_dagster.sources.benchmark_assets", "benchmark_prompts"),
    ("workbank_dagster.sources.benchmark_assets", "benchmark_results"),
    ("workbank_dagster.sources.benchmark_assets", "benchmark_instructions"),
)


def load_key(source_sha256: str) -> str:
    """The key of a load: the file's SHA-256 and the code that turns it into rows."""
    return fingerprint(code=code_version(*LOADERS), inputs=[source_sha256])


def load_record(source_sha256: str, frame: pd.DataFrame, source_file: str | None, source_bytes: int | Callable[[], int | None] | None) -> dict:
    """What a load of this file (already written as `frame`) records in its materialization
    (`source_bytes` may be a function, asked after the parse: a fetched file's size is known then)."""
    if callable(source_bytes):
        source_bytes = source_bytes()
    return {
        INPUTS_METADATA: load_key(source_sha256),
        "sha256": source_sha256,
        "file": source_file,
        "bytes": source_bytes,
        "rows": len(frame),
        "dtypes": [[str(c), str(t)] for c, t in frame.dtypes.items()],  # a list: the metadata's JSON sorts object keys
        "attrs": {k: v for k, v in sorted(frame.attrs.items()) if isinstance(v, (int, float, str, bool))},
    }


def recorded_loads(instance: dg.DagsterInstance, asset_key: dg.AssetKey, partitions: Iterable[str] | None = None) -> dict[str, dict]:
    """The loads the last materializations of a source recorded, per partition (`WHOLE_TABLE` for an
    unpartitioned source, whose partitions are None)."""
    if partitions is None:
        loads = getattr(last_fingerprint(instance, asset_key)[1].get(LOADS_METADATA), "value", None)
        found = {WHOLE_TABLE: loads.get(WHOLE_TABLE)} if isinstance(loads, dict) else {}
    else:
        found = recorded_per_partition(instance, asset_key, LOADS_METADATA, partitions)
    return {key: value for key, value in found.items() if isinstance(value, dict)}


def as_recorded(frame: pd.DataFrame | None, recorded: dict | None, source_sha256: str) -> pd.DataFrame | None:
    """`frame` (the rows kept where the load wrote them) with the recorded dtypes and attrs, if the
    recorded load read this file with this code and the rows are all still there; else None."""
    if frame is None or not recorded or recorded.get(INPUTS_METADATA) != load_key(source_sha256):
        return None
    dtypes = dict(recorded["dtypes"])
    if len(frame) != recorded["rows"] or list(frame.columns) != [column for column, _ in recorded["dtypes"]]:
        return None
    frame = frame.astype(dtypes)
    frame.attrs.update(recorded["attrs"])
    return frame


def reuse_or_parse(
    source_sha256: str,
    recorded: dict | None,
    read_back: Callable[[], pd.DataFrame | None],
    parse: Callable[[], pd.DataFrame],
    write: Callable[[pd.DataFrame], object],
    source_file: str | None = None,
    source_bytes: int | Callable[[], int | None] | None = None,
) -> tuple[pd.DataFrame, bool, dict]:
    """The recorded load's rows if they still stand (`read_back()`: the rows where the load wrote
    them, None when there are none), else `parse()` and `write` it.

    Returns the frame, whether it was parsed, and the record for this materialization."""
    frame = as_recorded(read_back(), recorded, source_sha256) if recorded and recorded.get(INPUTS_METADATA) == load_key(source_sha256) else None
    parsed = frame is None
    if parsed:
        frame = parse()
        write(frame)
    return frame, parsed, load_record(source_sha256, frame, source_file, source_bytes)


def loads_metadata(records: dict[str, dict]) -> dg.MetadataValue:
    """The `source_loads` metadata of a materialization: its records per partition."""
    return dg.MetadataValue.json({key: records[key] for key in sorted(records)})
