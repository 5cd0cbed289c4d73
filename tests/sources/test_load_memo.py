"""An unchanged source file is read back from the warehouse, not parsed again, and the rows and
metadata are exactly what parsing gives; any change (file, parser code, table) parses again."""

from __future__ import annotations

import json
import shutil

import dagster as dg
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


def _record(frame, digest):
    return load_memo.load_record(digest, frame, "f", 1)


@pytest.mark.parametrize("table", sorted(s.table for s in SOURCES))
def test_reused_load_equals_parsed_load(tmp_path, source_dir, table):
    source = SOURCES_BY_TABLE[table]
    path = source_dir / source.path
    parsed = source.read(path)
    digest = file_sha256(path)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    assert load_memo.reuse(con, "raw", table, None, digest) is None  # nothing recorded yet
    warehouse.replace_table(con, "raw", table, parsed)
    recorded = json.loads(json.dumps(_record(parsed, digest), sort_keys=True))  # as the event log gives it back
    reused = load_memo.reuse(con, "raw", table, recorded, digest)
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
    recorded = _record(frame, digest)
    assert load_memo.reuse(con, "raw", source.table, recorded, digest) is not None
    assert load_memo.reuse(con, "raw", source.table, recorded, "0" * 64) is None  # another file
    con.execute("DELETE FROM raw.onet_occupations WHERE rowid = (SELECT min(rowid) FROM raw.onet_occupations)")
    assert load_memo.reuse(con, "raw", source.table, recorded, digest) is None  # table changed under the record
    warehouse.replace_table(con, "raw", source.table, frame)
    monkeypatch.setattr(load_memo, "LOADERS", (*load_memo.LOADERS, "workbank_dagster.report.page"))
    assert load_memo.reuse(con, "raw", source.table, recorded, digest) is None  # the loading code changed
    monkeypatch.undo()
    con.execute("DROP TABLE raw.onet_occupations")
    assert load_memo.reuse(con, "raw", source.table, recorded, digest) is None  # warehouse rebuilt without it


def test_partitions_are_reused_one_by_one(tmp_path, source_dir):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    frames = {}
    for slug in ("cybench", "paperbench"):
        path = source_dir / "benchmarks" / f"{slug}.jsonl"
        frame = read_benchmark_prompts(path)
        frame["source_sha256"] = digest = file_sha256(path)
        warehouse.replace_rows(con, "raw", "benchmark_prompts", frame, {"benchmark": slug})
        frames[slug] = (frame, digest, _record(frame, digest))
    for slug, (frame, digest, recorded) in frames.items():
        pd.testing.assert_frame_equal(load_memo.reuse(con, "raw", "benchmark_prompts", recorded, digest, partition=slug), frame)
    # Another writer replacing one partition's rows leaves the other partition's record valid.
    cybench, digest, recorded = frames["cybench"]
    warehouse.replace_rows(con, "raw", "benchmark_prompts", cybench.head(3), {"benchmark": "cybench"})
    assert load_memo.reuse(con, "raw", "benchmark_prompts", recorded, digest, partition="cybench") is None
    _, paper_digest, paper_record = frames["paperbench"]
    assert load_memo.reuse(con, "raw", "benchmark_prompts", paper_record, paper_digest, partition="paperbench") is not None


def test_a_load_is_kept_from_its_last_materialization_only(tmp_path, source_dir):
    """Real materializations: the second reads back (parsed False), a changed file parses, a
    deleted table parses, and each materialization records its load in `source_loads`."""
    from workbank_dagster.resources import Warehouse
    from workbank_dagster.settings import PipelineSettings
    from workbank_dagster.sources.assets import raw_assets

    source = SOURCES_BY_TABLE["onet_occupations"]
    asset = next(a for a in raw_assets if a.key == dg.AssetKey(["raw", source.table]))
    folder = tmp_path / "sources"
    (folder / source.path).parent.mkdir(parents=True)
    shutil.copy(source_dir / source.path, folder / source.path)
    db = tmp_path / "w.duckdb"
    resources = {"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings(source_dir=str(folder), data_dir=str(tmp_path))}
    instance = dg.DagsterInstance.ephemeral()

    def parsed() -> bool:
        result = dg.materialize([asset], instance=instance, resources=resources)
        metadata = result.asset_materializations_for_node(asset.node_def.name)[0].metadata
        load = metadata[load_memo.LOADS_METADATA].value[load_memo.WHOLE_TABLE]
        assert load["sha256"] == file_sha256(folder / source.path) and load["file"] == source.path
        return metadata["recomputed"].value

    assert [parsed(), parsed()] == [True, False]
    (folder / source.path).write_bytes((folder / source.path).read_bytes() + b"\n")
    assert [parsed(), parsed()] == [True, False]
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE raw.onet_occupations")
    assert [parsed(), parsed()] == [True, False]


def test_fingerprint_covers_every_parser_module():
    from pathlib import Path

    from workbank_dagster.fingerprint import project_modules

    package = Path(load_memo.__file__).parent
    covered = {p for module in load_memo.LOADERS for p in project_modules(module)}
    parsers = {p for p in package.glob("*.py") if p.name not in ("__init__.py", "catalog.py", "fetch.py")}
    assert parsers <= covered, sorted(p.name for p in parsers - covered)
    assert Path(load_memo.warehouse.__file__) in covered
