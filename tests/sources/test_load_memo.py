"""An unchanged source file is read back from where its load wrote it (the warehouse table of a
whole-table source, a benchmark's Parquet file), not parsed again, and the rows and metadata are
exactly what parsing gives; any change (file, parser code, table or file) parses again. What a load
read is logged beside the data (load_memo's logs), not in the Dagster instance."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import duckdb
import pandas as pd
import pytest

from workbank_dagster import warehouse
from workbank_dagster.common import file_sha256, table_metadata
from workbank_dagster.partition_files import PartitionFiles
from workbank_dagster.sources import load_memo
from workbank_dagster.sources.benchmarks import read_benchmark_prompts
from workbank_dagster.sources.registry import SOURCES, SOURCES_BY_TABLE


def _metadata_view(frame, source=None) -> dict:
    return {k: str(v) for k, v in table_metadata(frame, source).items()}


def _record(frame, digest):
    return load_memo.load_record(digest, frame, "f", 1)


def _reuse(con, table: str, recorded, digest: str):
    """What a whole-table load reads back (sources/assets.py: the rows of raw.<table>, if it exists)."""
    frame = con.execute(f"SELECT * FROM raw.{table}").df() if warehouse.table_exists(con, "raw", table) else None
    return load_memo.as_recorded(frame, recorded, digest)


@pytest.mark.parametrize("table", sorted(s.table for s in SOURCES))
def test_reused_load_equals_parsed_load(tmp_path, source_dir, table):
    source = SOURCES_BY_TABLE[table]
    path = source_dir / source.path
    parsed = source.read(path)
    digest = file_sha256(path)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    assert _reuse(con, table, None, digest) is None  # nothing recorded yet
    warehouse.replace_table(con, "raw", table, parsed)
    files = PartitionFiles(tmp_path / "partitions")
    load_memo.append_loads(files, table, {load_memo.WHOLE_TABLE: _record(parsed, digest)}, "run1")
    recorded = load_memo.recorded_loads(files, table)[load_memo.WHOLE_TABLE]  # as the log gives it back
    reused = _reuse(con, table, recorded, digest)
    assert reused is not None
    pd.testing.assert_frame_equal(reused, parsed)
    assert reused.attrs == {k: v for k, v in parsed.attrs.items() if isinstance(v, (int, float, str, bool))}
    assert _metadata_view(reused, source) == _metadata_view(parsed, source)


def test_any_change_means_parse_again(tmp_path, source_dir, package_copy):
    source = SOURCES_BY_TABLE["onet_occupations"]
    path = source_dir / source.path
    frame = source.read(path)
    digest = file_sha256(path)
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    warehouse.replace_table(con, "raw", source.table, frame)
    recorded = _record(frame, digest)
    assert _reuse(con, source.table, recorded, digest) is not None
    assert _reuse(con, source.table, recorded, "0" * 64) is None  # another file
    con.execute("DELETE FROM raw.onet_occupations WHERE rowid = (SELECT min(rowid) FROM raw.onet_occupations)")
    assert _reuse(con, source.table, recorded, digest) is None  # table changed under the record
    con.execute("DROP TABLE raw.onet_occupations")
    assert _reuse(con, source.table, recorded, digest) is None  # warehouse rebuilt without it
    warehouse.replace_table(con, "raw", source.table, frame)
    assert _reuse(con, source.table, recorded, digest) is not None
    package_copy("sources/bls.py", "def read_oews_national(", "def read_oews_national_unused():\n    return 0\n\n\ndef read_oews_national(")
    assert _reuse(con, source.table, recorded, digest) is not None  # a function no loader calls: no code change
    package_copy("sources/onet.py", '    columns = {**OCCUPATION, "description": col("Description", nullable=True)}\n',
                 '    columns = {**OCCUPATION, "description": col("Description", nullable=True)}\n    columns = dict(columns)\n')
    assert _reuse(con, source.table, recorded, digest) is None  # the loading code changed


def test_partitions_are_reused_one_by_one_from_their_files(tmp_path, source_dir):
    """A benchmark's load is read back from its Parquet file with the parser's exact dtypes and
    attrs; another benchmark's file rewritten leaves this one's record valid."""
    files = PartitionFiles(tmp_path / "partitions")
    frames = {}
    for slug in ("cybench", "paperbench"):
        path = source_dir / "benchmarks" / f"{slug}.jsonl"
        frame = read_benchmark_prompts(path)
        frame["source_sha256"] = digest = file_sha256(path)
        files.write("benchmark_prompts", slug, frame)
        frames[slug] = (frame, digest, json.loads(json.dumps(_record(frame, digest), sort_keys=True)))
    for slug, (frame, digest, recorded) in frames.items():
        pd.testing.assert_frame_equal(load_memo.as_recorded(pd.read_parquet(files.path("benchmark_prompts", slug)), recorded, digest), frame)
    cybench, digest, recorded = frames["cybench"]
    files.write("benchmark_prompts", "cybench", cybench.head(3))
    assert load_memo.as_recorded(pd.read_parquet(files.path("benchmark_prompts", "cybench")), recorded, digest) is None
    _, paper_digest, paper_record = frames["paperbench"]
    assert load_memo.as_recorded(pd.read_parquet(files.path("benchmark_prompts", "paperbench")), paper_record, paper_digest) is not None
    assert load_memo.as_recorded(None, paper_record, paper_digest) is None  # its file deleted


def test_a_load_is_kept_from_its_last_logged_load_whatever_the_instance(tmp_path, source_dir):
    """Real materializations, each on a new Dagster instance (a wiped dagster_home): the second reads
    back (parsed False), a changed file parses, a deleted table parses; each parse appends its load
    to the source's log, and a kept load appends nothing."""
    from workbank_dagster.resources import Warehouse
    from workbank_dagster.settings import PipelineSettings
    from workbank_dagster.sources.assets import raw_assets

    source = SOURCES_BY_TABLE["onet_occupations"]
    asset = next(a for a in raw_assets if a.key == dg.AssetKey(["raw", source.table]))
    folder = tmp_path / "sources"
    (folder / source.path).parent.mkdir(parents=True)
    shutil.copy(source_dir / source.path, folder / source.path)
    db = tmp_path / "w.duckdb"
    resources = {"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings.of(source_dir=str(folder), data_dir=str(tmp_path))}
    log = PartitionFiles(tmp_path / "partitions").path(load_memo.WHOLE_TABLE_LOG, source.table)

    def parsed() -> bool:
        result = dg.materialize([asset], instance=dg.DagsterInstance.ephemeral(), resources=resources)
        metadata = result.asset_materializations_for_node(asset.node_def.name)[0].metadata
        last = pd.read_parquet(log).iloc[-1]
        assert last["sha256"] == file_sha256(folder / source.path) and last["file"] == source.path and last["raw_table"] == source.table
        return metadata["recomputed"].value

    assert [parsed(), parsed()] == [True, False]
    (folder / source.path).write_bytes((folder / source.path).read_bytes() + b"\n")
    assert [parsed(), parsed()] == [True, False]
    with duckdb.connect(str(db)) as con:
        con.execute("DROP TABLE raw.onet_occupations")
    assert [parsed(), parsed()] == [True, False]
    logged = pd.read_parquet(log)
    assert len(logged) == 3 and logged["loaded_at"].is_monotonic_increasing and logged["run_id"].nunique() == 3
    assert logged["sha256"].nunique() == 2  # the file changed once


def test_the_load_key_covers_every_parser_module():
    """The loads' code version (code_version.py) reaches into every parser module of the sources
    package, and into where the loads write."""
    from pathlib import Path

    from workbank_dagster.code_version import reached

    package = Path(load_memo.__file__).parent
    covered = {name.split(":")[0] for name in reached(*load_memo.LOADERS)}
    parsers = {f"workbank_dagster.sources.{p.stem}" for p in package.glob("*.py") if p.name not in ("__init__.py", "catalog.py", "fetch.py", "assets.py")}
    assert parsers <= covered, sorted(parsers - covered)
    assert {"workbank_dagster.warehouse", "workbank_dagster.partition_files"} <= covered  # where the loads write
