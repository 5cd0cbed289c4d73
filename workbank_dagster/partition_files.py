"""The per-benchmark tables as files: one Parquet file per table and partition, outside the warehouse.

DuckDB takes one writer process per file, and while one holds it no other process may open it. So
the partitioned steps (a benchmark's prompts and results, each judge's labels) never open the
warehouse: each writes its rows to `<partitions_dir>/<table>/<benchmark>.parquet`, first under a
temporary name in the same folder, then renamed over the old file. A rename within a folder is
atomic: a reader, or a run killed halfway, sees the old file whole or the new one whole, never half
of one. Partitions of different benchmarks are different files, so backfills run side by side.
DuckDB, though, opens a file more than once in a query (its schema, then its rows), and a dbt
build reads the files in many queries: so DuckDB reads hard links to them, made when the query or
the build began (`query`, `frozen`), which a rename over a file leaves whole.

The unpartitioned steps build the warehouse from these files: dbt reads each table as an external
source (`read_parquet('<table>/*.parquet')`, the folder given to DuckDB as `file_search_path` in
profiles.yml). What the partitioned steps need of O*NET reaches them the same way, as files the
task index step writes (`SHARED`).

Each table has one owner: sources writes and prunes its tables, labeling its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pandas as pd

from .atomic import atomic_path, is_temporary
from .common import file_sha256

SUFFIX = ".parquet"
# The folder of unpartitioned files the partitioned steps read (the O*NET tables of the task index).
SHARED = "_shared"
# Every partition file's SHA-256 with the size and modification time it was hashed at
# (`PartitionFiles.file_sha256s`), kept at the root: the warehouse step's key reads it, and so do
# the staging models (macros/by_benchmark.sql), by this name relative to DuckDB's file_search_path.
FILE_HASHES = ".file_sha256.parquet"
# A file modified less than this before it was hashed may be written again within the same tick of
# the clock, with the same size, and keep its time: its hash is not kept (git's "racily clean").
RACY_SECONDS = 2.0
# The folder at the root where each query's hard links live while it runs (`PartitionFiles.query`).
READING = ".reading"
# A query's folder of links older than this is a killed reader's (no query runs for hours): the
# next query deletes it, and with it the old file versions its links hold on disk.
LEFT_BY_A_KILLED_READER_SECONDS = 6 * 3600.0


def _remove_killed_readers_links(reading: Path) -> None:
    """Delete the query folders under `reading` made more than LEFT_BY_A_KILLED_READER_SECONDS ago:
    a query deletes its own when it ends, so these are the links of a reader that was killed."""
    old = time.time() - LEFT_BY_A_KILLED_READER_SECONDS
    for folder in reading.glob("query-*"):
        try:
            if folder.stat().st_mtime < old:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass  # another query removed it first


class PartitionFiles:
    """The files under one folder (`settings.partitions_dir`): `<table>/<partition>.parquet`."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def path(self, table: str, partition: str) -> Path:
        return self.root / table / f"{partition}{SUFFIX}"

    def write(self, table: str, partition: str, frame: pd.DataFrame) -> Path:
        """Write a partition's rows whole: to a temporary file beside it, flushed, then renamed over it."""
        target = self.path(table, partition)
        with atomic_path(target) as scratch:
            frame.reset_index(drop=True).to_parquet(scratch, index=False)
            with open(scratch, "rb") as handle:
                os.fsync(handle.fileno())
        return target

    def remove(self, table: str, partition: str) -> bool:
        path = self.path(table, partition)
        existed = path.is_file()
        path.unlink(missing_ok=True)
        return existed

    def tables(self) -> list[str]:
        """The tables that have a folder here, sorted (with SHARED; not the hidden ones: READING)."""
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")) if self.root.is_dir() else []

    def partitions(self, table: str) -> list[str]:
        """The partitions that have a file of this table, sorted."""
        folder = self.root / table
        return sorted(p.name[: -len(SUFFIX)] for p in folder.glob(f"*{SUFFIX}") if not p.name.startswith(".")) if folder.is_dir() else []

    def existing(self, table: str, partitions: Iterable[str] | None = None) -> list[Path]:
        """The files of these partitions that exist (every partition: None), in partition order."""
        names = self.partitions(table) if partitions is None else sorted(set(partitions))
        return [path for path in (self.path(table, name) for name in names) if path.is_file()]

    def read(self, table: str, partitions: Iterable[str] | None = None, columns: list[str] | None = None) -> pd.DataFrame:
        """The rows of these partitions (every partition: None), in partition order; a partition
        without a file has no rows. With no file at all, an empty frame with `columns` (or none)."""
        frames = [pd.read_parquet(path, columns=columns) for path in self.existing(table, partitions)]
        frames = [f for f in frames if len(f.columns)]
        if not frames:
            return pd.DataFrame(columns=columns or [])
        if len(frames) == 1:
            return frames[0]
        return pd.concat(frames, ignore_index=True)

    def query(self, table: str, sql: str, partitions: Iterable[str] | None = None, params: list | None = None) -> pd.DataFrame | None:
        """`sql` run by DuckDB (in memory) with `{table}` standing for the files of these partitions
        (every partition: None), as one relation; None when none of them has a file.

        DuckDB opens a file more than once in a query (for its schema, then for its rows). Another
        run's write renamed over a file in between used to fail the query ("Invalid data", "Out of
        buffer"), or could have mixed two versions. So DuckDB reads hard links to the files as they
        were when the query began (`_snapshot`): a rename over a file leaves a link to it whole."""
        paths = self.existing(table, partitions)
        if not paths:
            return None
        with self._snapshot(paths) as frozen:
            if not frozen:
                return None
            quoted = ", ".join("'" + str(path).replace("'", "''") + "'" for path in frozen)
            relation = f"read_parquet([{quoted}], union_by_name = true)"
            with duckdb.connect() as con:
                return con.execute(sql.format(table=relation), params or []).df()

    @contextmanager
    def _snapshot(self, paths: list[Path]) -> Iterator[list[Path]]:
        """A hard link to each of these files (none to one removed since it was listed), in a folder
        of its own under READING, deleted when the block ends. Where no link can be made (a
        read-only copy of the data, which no run writes), the files themselves."""
        folder = None
        try:
            (self.root / READING).mkdir(exist_ok=True)
            _remove_killed_readers_links(self.root / READING)
            folder = Path(tempfile.mkdtemp(prefix="query-", dir=self.root / READING))
            links = [folder / f"{number}{SUFFIX}" for number in range(len(paths))]
            links = [link for path, link in zip(paths, links, strict=True) if _linked(path, link)]
        except OSError:
            links = paths
        try:
            yield links
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def frozen_root(self, name: str) -> Path:
        """Where `frozen(..., name)` links the files (when links can be made)."""
        return self.root / READING / name

    @contextmanager
    def frozen(self, tables: Iterable[str], name: str) -> Iterator[PartitionFiles]:
        """These tables' files as they are now, for a reader that reads them for a while (a dbt
        build: many queries, each opening a file more than once), in a PartitionFiles of its own:
        hard links to each file in `READING/<name>/<table>/`, under the same names, beside a link to
        the kept hashes (FILE_HASHES). Another run's write renames over a file here and leaves its
        link whole, so the reader sees every file as it was when the block began. The hashes the
        block keeps there (`file_sha256s`) are handed back to this folder's FILE_HASHES when it ends
        (a cache: one another process wrote meanwhile may lose a few, which are hashed again), and
        the links are deleted. `name` is the reader's, the same from run to run (a dbt build's
        profile names the folder, and dbt parses the whole project again when its profile moves);
        two readers with one name must not overlap. Where no link can be made (a read-only copy of
        the data, which no run writes), this folder itself."""
        folder = self.frozen_root(name)
        shutil.rmtree(folder, ignore_errors=True)  # a killed reader's
        try:
            for table in tables:
                (folder / table).mkdir(parents=True)
                for path in self.existing(table):
                    _linked(path, folder / table / path.name)
            folder.mkdir(parents=True, exist_ok=True)
            if (self.root / FILE_HASHES).is_file():
                _linked(self.root / FILE_HASHES, folder / FILE_HASHES)
        except OSError:
            shutil.rmtree(folder, ignore_errors=True)
            yield self
            return
        try:
            yield PartitionFiles(folder)
            kept, here = folder / FILE_HASHES, self.root / FILE_HASHES
            if kept.is_file() and not (here.is_file() and os.path.samefile(kept, here)):  # written anew in the block
                with atomic_path(here) as scratch:
                    shutil.copyfile(kept, scratch)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def remove_except(self, tables: Iterable[str], keep: Iterable[str]) -> dict[str, int]:
        """Delete the files of every partition not in `keep` from these tables (and temporary files a
        killed write left); files removed per table, where any were."""
        keep = set(keep)
        removed: dict[str, int] = {}
        for table in tables:
            folder = self.root / table
            if not folder.is_dir():
                continue
            for path in folder.iterdir():
                stale_scratch = is_temporary(path)
                if stale_scratch or (path.name.endswith(SUFFIX) and path.name[: -len(SUFFIX)] not in keep):
                    path.unlink(missing_ok=True)
                    if not stale_scratch:
                        removed[table] = removed.get(table, 0) + 1
        return removed

    def content_sha256(self, table: str) -> str | None:
        """One SHA-256 of a table's files, their names and bytes (None: no file): what dbt reads of it."""
        return self.content_sha256s([table])[table]

    def content_sha256s(self, tables: Iterable[str]) -> dict[str, str | None]:
        """`content_sha256` of each table, each file's SHA-256 taken from the kept hashes
        (`file_sha256s`), which are then written for the next run and for dbt to read."""
        tables = list(tables)
        hashes = self.file_sha256s(tables)
        out: dict[str, str | None] = {}
        for table in tables:
            files = hashes[table]
            if not files:
                out[table] = None
                continue
            digest = hashlib.sha256()
            for partition, (_, _, sha256) in files.items():
                digest.update(partition.encode() + b"\x1f" + sha256.encode() + b"\x1e")
            out[table] = digest.hexdigest()
        return out

    def file_sha256s(self, tables: Iterable[str]) -> dict[str, dict[str, tuple[int, int, str]]]:
        """Per table, each file's (size, modification time in microseconds, SHA-256 of its bytes), in
        partition order. A file whose size and time are those kept in FILE_HASHES is not read again;
        the others are hashed. Then FILE_HASHES is written anew with every file of these tables now
        here (less those modified within RACY_SECONDS of being hashed) and the other tables' as they
        were, for the next run and for dbt: the staging models read a file's hash there while its
        size and time still match (macros/by_benchmark.sql) instead of hashing its bytes. At a
        million prompts the 5,000 files (1.7 GB) took about 1.7 s to hash here, and DuckDB hashed
        them again, twice per staging model, about 2 s more. A folder that cannot be written (a
        read-only copy of the data) keeps no hashes: every file is hashed each time, as before."""
        kept = self._kept_hashes()
        now = time.time()
        out: dict[str, dict[str, tuple[int, int, str]]] = {}
        rows = []
        for table in tables:
            files = out.setdefault(table, {})
            for path in self.existing(table):
                stat = path.stat()
                size, modified_us = stat.st_size, stat.st_mtime_ns // 1000
                known = kept.get((table, path.name))
                still = known is not None and known[:2] == (size, modified_us)
                sha256 = known[2] if still else file_sha256(path)
                files[path.stem] = (size, modified_us, sha256)
                if still or now - stat.st_mtime >= RACY_SECONDS:
                    rows.append((table, path.name, size, modified_us, sha256))
        rows += [(table, name, *known) for (table, name), known in kept.items() if table not in out]  # the other tables' are theirs to judge
        frame = pd.DataFrame(rows, columns=["table_name", "file_name", "size", "modified_us", "sha256"])
        try:
            with atomic_path(self.root / FILE_HASHES) as scratch:
                frame.astype({"size": "int64", "modified_us": "int64"}).to_parquet(scratch, index=False)
        except OSError:
            pass  # not kept: the next run hashes every file again
        return out

    def _kept_hashes(self) -> dict[tuple[str, str], tuple[int, int, str]]:
        """FILE_HASHES as (table, file name) -> (size, modification time in µs, SHA-256); empty when
        it is missing or unreadable (every file is then hashed)."""
        path = self.root / FILE_HASHES
        try:
            frame = pd.read_parquet(path)[["table_name", "file_name", "size", "modified_us", "sha256"]] if path.is_file() else None
        except (OSError, ValueError, KeyError):  # unreadable, or not these columns
            frame = None
        if frame is None:
            return {}
        return {(t, f): (int(s), int(m), h) for t, f, s, m, h in frame.itertuples(index=False)}

    def shared_path(self, name: str) -> Path:
        return self.root / SHARED / f"{name}{SUFFIX}"

    def write_shared(self, name: str, frame: pd.DataFrame) -> Path:
        return self.write(SHARED, name, frame)

    def read_shared(self, name: str) -> pd.DataFrame:
        path = self.shared_path(name)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing; materialize labeling/task_index first, which writes it")
        return pd.read_parquet(path)


def _linked(path: Path, link: Path) -> bool:
    """Whether `link` was made a hard link to `path` (not if `path` is gone)."""
    try:
        os.link(path, link)
    except FileNotFoundError:
        if link.parent.is_dir():
            return False
        raise
    return True
