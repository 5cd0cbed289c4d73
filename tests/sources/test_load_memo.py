"""An unchanged source file is read back from the warehouse, not parsed again, and the rows and
metadata are exactly what parsing gives; any change (file, parser code, table) parses again."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from workbank_dagster import warehouse
from workbank_dagster.common import file_sha256, table_metadata
from workbank_dagster.sources import load_memo
from workbank_dagster.sources.benchmarks import read_benchmark_prompts
from workbank_dagster.sources.registry import SOURCES, SOURCES_BY_TABLE


def _metadata_view(frame, source=None) -> dict:
    return {k: str(v) for k, v in table_metadata(frame, source).items()}


@pytest.mark.parametrize("table", sorted(s.table for s in SOURCES))
def test_reused_load_equals_parsed_load(tmp_path, source_dir, table):
    source = SOURCES_BY_TABLE[table]
    path = source_dir / source.path
    parsed = source.read(path)
    digest = file_sha256(path)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    assert load_memo.reuse(con, "raw", table, digest) is None  # nothing recorded yet
    warehouse.replace_table(con, "raw", table, parsed)
    load_memo.record(con, "raw", table, digest, parsed)
    reused = load_memo.reuse(con, "raw", table, digest)
    assert reused is not None
    pd.testing.assert_frame_equal(reused, parsed)
    assert reused.attrs == {k: v for k, v in parsed.attrs.items() if isinstance(v, (int, float, str, bool))}
    assert _metadata_view(reused, source) == _metadata_view(parsed, source)


def test_any_change_means_parse_again(tmp_path, source_dir, monkeypatch):
    source = SOURCES_BY_TABLE["onet_occupations"]
    path = source_dir / source.path
    frame = source.read(path)
    digest = file_sha256(path)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    warehouse.replace_table(con, "raw", source.table, frame)
    load_memo.record(con, "raw", source.table, digest, frame)
    assert load_memo.reuse(con, "raw", source.table, digest) is not None
    assert load_memo.reuse(con, "raw", source.table, "0" * 64) is None  # another file
    con.execute("DELETE FROM raw.onet_occupations WHERE rowid = (SELECT min(rowid) FROM raw.onet_occupations)")
    assert load_memo.reuse(con, "raw", source.table, digest) is None  # table changed under the record
    warehouse.replace_table(con, "raw", source.table, frame)
    load_memo.record(con, "raw", source.table, digest, frame)
    monkeypatch.setattr(load_memo, "parser_code_sha256", lambda: "another parser")
    assert load_memo.reuse(con, "raw", source.table, digest) is None  # the parser code changed
    monkeypatch.undo()
    con.execute("DROP TABLE raw.onet_occupations")
    assert load_memo.reuse(con, "raw", source.table, digest) is None  # warehouse rebuilt without it


def test_partitions_are_reused_one_by_one(tmp_path, source_dir):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    frames = {}
    for slug in ("cybench", "paperbench"):
        path = source_dir / "benchmarks" / f"{slug}.jsonl"
        frame = read_benchmark_prompts(path)
        frame["source_sha256"] = digest = file_sha256(path)
        warehouse.replace_rows(con, "raw", "benchmark_prompts", frame, {"benchmark": slug})
        load_memo.record(con, "raw", "benchmark_prompts", digest, frame, partition=slug)
        frames[slug] = (frame, digest)
    for slug, (frame, digest) in frames.items():
        pd.testing.assert_frame_equal(load_memo.reuse(con, "raw", "benchmark_prompts", digest, partition=slug), frame)
    # Another writer replacing one partition's rows leaves the other partition's record valid.
    cybench, digest = frames["cybench"]
    warehouse.replace_rows(con, "raw", "benchmark_prompts", cybench.head(3), {"benchmark": "cybench"})
    assert load_memo.reuse(con, "raw", "benchmark_prompts", digest, partition="cybench") is None
    assert load_memo.reuse(con, "raw", "benchmark_prompts", frames["paperbench"][1], partition="paperbench") is not None
    # The record names its partition: another partition with the same file hash is not reused from it.
    assert load_memo.reuse(con, "raw", "benchmark_prompts", frames["paperbench"][1], partition="cybench") is None


def test_fingerprint_covers_every_parser_module():
    from pathlib import Path

    from workbank_dagster.fingerprint import project_modules

    package = Path(load_memo.__file__).parent
    covered = {p for module in load_memo.LOADERS for p in project_modules(module)}
    parsers = {p for p in package.glob("*.py") if p.name not in ("__init__.py", "catalog.py", "fetch.py")}
    assert parsers <= covered, sorted(p.name for p in parsers - covered)
    assert Path(load_memo.warehouse.__file__) in covered
