"""Helpers every package uses: file and prompt hashes, the benchmark/audit slug rule, asset metadata.

Kept here, with no project import of its own, so that sources, labeling, analysis, audits and report
can share them without reaching into one another's modules."""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from pathlib import Path
from typing import Protocol

import dagster as dg
import pandas as pd

# A benchmark or audit file's stem: it names a Dagster partition and a folder, so it stays plain.
SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def asset_attributes(group: str, owner: str, *kinds: str) -> dict:
    """What every asset declares, as keyword arguments of `dg.asset` or `dg.AssetSpec`: its group,
    its owner (the teams the dbt models name in meta.owner) and its kinds (python and duckdb unless
    given)."""
    return {"group_name": group, "owners": [owner], "kinds": set(kinds or ("python", "duckdb"))}


def warehouse_step(group: str, owner: str, *kinds: str) -> dict:
    """`asset_attributes` and pool `warehouse`, for a step that touches the warehouse: DuckDB takes
    one writer at a time."""
    return {**asset_attributes(group, owner, *kinds), "pool": "warehouse"}


# The pool of the per-benchmark steps: they write their own files (partition_files.py), never the
# warehouse, so they stay out of pool `warehouse`.
PARTITIONS_POOL = "partitions"


def partition_step(group: str, owner: str, *kinds: str) -> dict:
    """`asset_attributes` and pool `partitions`, for a per-benchmark step."""
    return {**asset_attributes(group, owner, *(kinds or ("python", "parquet"))), "pool": PARTITIONS_POOL}


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    """SHA-256 of a text's UTF-8 bytes: a prompt's `prompt_hash`, the key of its embeddings and judgements."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Provenance(Protocol):
    """What `table_metadata` shows of a source (sources.registry.Source has these)."""

    origin: str
    licence: str
    keys: tuple[str, ...]


def table_metadata(frame: pd.DataFrame, source: Provenance | None = None) -> dict:
    """The Dagster metadata of a written table: row count, column schema, a preview, its provenance."""
    metadata: dict = {
        "dagster/row_count": dg.MetadataValue.int(len(frame)),
        "dagster/column_schema": dg.TableSchema(columns=[dg.TableColumn(str(c), str(frame[c].dtype)) for c in frame.columns]),
        "preview": dg.MetadataValue.md(frame.head(5).to_markdown(index=False) if len(frame) else "(empty)"),
    }
    if source is not None:
        metadata["origin"] = source.origin
        metadata["licence"] = source.licence
        if source.keys:
            metadata["key"] = ", ".join(source.keys)
    for key, value in frame.attrs.items():
        if key not in ("line_offset", "sheet") and isinstance(value, (int, float, str)):
            metadata[key] = value
    return metadata


def wal_connection(path: Path, *, synchronous: str, isolation_level: str | None = "") -> sqlite3.Connection:
    """A connection to a SQLite store in WAL mode, as the embedding and judgement stores open it.

    Several processes may open a new store at once (#18's writers test: four). Switching a file to
    WAL takes a lock for which SQLite may answer "database is locked" at once, without waiting out
    the busy timeout (one CI run in four here failed that way on opening), so the switch is tried
    again for up to the same 60 s."""
    con = sqlite3.connect(path, timeout=60, isolation_level=isolation_level)
    deadline = time.monotonic() + 60
    while True:
        try:
            con.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                con.close()
                raise
            time.sleep(0.05)
    con.execute(f"PRAGMA synchronous={synchronous}")
    return con
