"""Read an unchanged source back from where its load wrote it instead of parsing its file again,
and keep the log of what each load read: the warehouse's list of source files.

A warm run used to parse and validate every source file again (about 8 of its 60 seconds). Now
each load appends what it read to its source's load log, an append-only Parquet table beside the
per-benchmark files (partition_files.py; one file per benchmark of a partitioned source,
`<table>_loads/<benchmark>.parquet`, one per whole table, `source_loads/<table>.parquet`): when
(`loaded_at`) and in which run, the load's key (`inputs_sha256`: the file's SHA-256 and the code
version of the loading steps and of what they reach), the file's SHA-256, path (relative to the
source folder) and size, the row count, and the parsed frame's dtypes and attrs. `raw/source_files`
publishes the files from there. The log is data, so it lives with the data: a wiped or moved
Dagster instance loses none of it.

A later load whose key equals the one its last logged load recorded, and whose rows are still
there, exactly that many with those columns (the warehouse table of a whole-table source, the
Parquet file of a benchmark's partition), reads those rows back: the same frame the parser
produced, so the same metadata, and logs nothing (nothing was read). Anything else parses as
before and is logged: a changed file, changed code, a warehouse rebuilt or emptied, no load yet. A
load that fails logs nothing, so its next load parses. The one thing the check cannot see is a
table rewritten by hand with the same row count.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

import pandas as pd

from ..code_version import code_version
from ..fingerprint import INPUTS_METADATA, fingerprint
from ..partition_files import PartitionFiles

WHOLE_TABLE = ""  # the partition of an unpartitioned source's record
WHOLE_TABLE_LOG = "source_loads"  # the log of the whole-table sources: one file per table
# The steps that load sources: the code versions of their functions and of what those reach
# (code_version.py) are "the parser".
LOADERS = (
    ("workbank_dagster.sources.assets", "_raw_asset"),
    ("workbank_dagster.sources.registry", "SOURCES"),  # each source's reader
    ("workbank_dagster.sources.benchmark_assets", "benchmark_prompts"),
    ("workbank_dagster.sources.benchmark_assets", "benchmark_results"),
    ("workbank_dagster.sources.benchmark_assets", "benchmark_instructions"),
)
# A row of a load log.
LOG_COLUMNS = {
    "loaded_at": "datetime64[us, UTC]",
    "run_id": "string",
    "raw_table": "string",
    "benchmark": "string",  # NULL for a whole-table source
    "file": "string",
    "bytes": "Int64",
    "sha256": "string",
    INPUTS_METADATA: "string",
    "rows": "Int64",
    "dtypes": "string",  # JSON [[column, dtype], ...]
    "attrs": "string",  # JSON {name: value}
}


def log_table(raw_table: str) -> str:
    """The per-benchmark load log of a partitioned source (its files: `<table>_loads/<benchmark>.parquet`)."""
    return f"{raw_table}_loads"


def is_load_log(table: str) -> bool:
    """Whether a folder of the partitions folder is a load log (what loads read, which dbt does not)."""
    return table == WHOLE_TABLE_LOG or table.endswith("_loads")


def _where(raw_table: str, partition: str) -> tuple[str, str]:
    """(log table, file) of a source's partition (`WHOLE_TABLE` for a whole-table source)."""
    return (WHOLE_TABLE_LOG, raw_table) if partition == WHOLE_TABLE else (log_table(raw_table), partition)


def load_key(source_sha256: str) -> str:
    """The key of a load: the file's SHA-256 and the code that turns it into rows."""
    return fingerprint(code=code_version(*LOADERS), inputs=[source_sha256])


def load_record(source_sha256: str, frame: pd.DataFrame, source_file: str | None, source_bytes: int | Callable[[], int | None] | None) -> dict:
    """What a load of this file (already written as `frame`) logs (`source_bytes` may be a
    function, asked after the parse: a fetched file's size is known then)."""
    if callable(source_bytes):
        source_bytes = source_bytes()
    return {
        INPUTS_METADATA: load_key(source_sha256),
        "sha256": source_sha256,
        "file": source_file,
        "bytes": source_bytes,
        "rows": len(frame),
        "dtypes": [[str(c), str(t)] for c, t in frame.dtypes.items()],
        "attrs": {k: v for k, v in sorted(frame.attrs.items()) if isinstance(v, (int, float, str, bool))},
    }


def append_loads(files: PartitionFiles, raw_table: str, records: dict[str, dict], run_id: str) -> None:
    """Append each partition's load (`WHOLE_TABLE` for a whole-table source) to its log: the log's
    rows so far and the new one, written whole and renamed into place (partition_files.py)."""
    now = pd.Timestamp.now(tz="UTC")
    for partition, record in sorted(records.items()):
        row = {
            "loaded_at": now, "run_id": run_id, "raw_table": raw_table, "benchmark": partition or None,
            "file": record["file"], "bytes": record["bytes"], "sha256": record["sha256"], INPUTS_METADATA: record[INPUTS_METADATA],
            "rows": record["rows"], "dtypes": json.dumps(record["dtypes"]), "attrs": json.dumps(record["attrs"], sort_keys=True),
        }
        table, name = _where(raw_table, partition)
        path = files.path(table, name)
        before = pd.read_parquet(path) if path.is_file() else None
        new = pd.DataFrame([row], columns=list(LOG_COLUMNS)).astype(LOG_COLUMNS)
        files.write(table, name, new if before is None else pd.concat([before.astype(LOG_COLUMNS), new], ignore_index=True))


def recorded_loads(files: PartitionFiles, raw_table: str, partitions: Iterable[str] | None = None) -> dict[str, dict]:
    """The last logged load of a source, per partition (`WHOLE_TABLE` for a whole-table source,
    whose partitions are None); a partition never loaded is left out."""
    out: dict[str, dict] = {}
    for partition in [WHOLE_TABLE] if partitions is None else partitions:
        path = files.path(*_where(raw_table, partition))
        if not path.is_file():
            continue
        last = pd.read_parquet(path).iloc[-1]
        out[partition] = {
            INPUTS_METADATA: last[INPUTS_METADATA], "sha256": last["sha256"], "file": None if pd.isna(last["file"]) else last["file"],
            "bytes": None if pd.isna(last["bytes"]) else int(last["bytes"]), "rows": int(last["rows"]),
            "dtypes": json.loads(last["dtypes"]), "attrs": json.loads(last["attrs"]),
        }
    return out


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

    Returns the frame, whether it was parsed, and the record of this load (to log when parsed)."""
    frame = as_recorded(read_back(), recorded, source_sha256) if recorded and recorded.get(INPUTS_METADATA) == load_key(source_sha256) else None
    parsed = frame is None
    if parsed:
        frame = parse()
        write(frame)
    return frame, parsed, load_record(source_sha256, frame, source_file, source_bytes)
