"""Each layer prunes its own files: when a benchmark's partition is gone, `raw/benchmark_catalog`
deletes its raw files and `labeling/label_catalog` its labeling files; neither touches the other's."""

from __future__ import annotations

import os
import subprocess
import sys

import dagster as dg
import pandas as pd

from workbank_dagster import warehouse
from workbank_dagster.labeling.catalog import label_catalog
from workbank_dagster.partition_files import PartitionFiles
from workbank_dagster.resources import Warehouse
from workbank_dagster.settings import PipelineSettings
from workbank_dagster.sources.catalog import benchmark_catalog

TABLES = ("benchmark_prompts", "embedded_labels", "embedded_judgements")


def _counts(files: PartitionFiles) -> dict[str, dict[str, int]]:
    """Rows per benchmark of each per-benchmark table, from its files."""
    return {table: files.read(table)["benchmark"].value_counts().sort_index().to_dict() for table in TABLES}


def _write(files: PartitionFiles, table: str, frame: pd.DataFrame) -> None:
    for benchmark, rows in frame.groupby("benchmark"):
        files.write(table, benchmark, rows)


def test_each_catalog_prunes_its_own_layer(tmp_path):
    db = tmp_path / "w.duckdb"
    files = PartitionFiles(tmp_path / "data" / "partitions")
    _write(files, "benchmark_prompts", pd.DataFrame([("kept", "1", "a prompt"), ("gone", "1", "another")], columns=["benchmark", "prompt_id", "prompt"]))
    _write(files, "embedded_labels", pd.DataFrame(
        [("kept", "1", 7, 1, 0.5, "v4", "h1"), ("gone", "1", 8, 1, 0.4, "v4", "h2"), ("gone", "1", 9, 2, 0.3, "v4", "h2")],
        columns=["benchmark", "prompt_id", "task_id", "rank", "score", "labeler", "prompt_hash"],
    ))
    _write(files, "embedded_judgements", pd.DataFrame(
        [("kept", "1", "v4", "h1", "labeled"), ("kept", "2", "v4", "h3", "abstained"), ("gone", "1", "v4", "h2", "labeled")],
        columns=["benchmark", "prompt_id", "labeler", "prompt_hash", "status"],
    ))
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", ["kept"])
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "kept.jsonl").write_text('{"benchmark": "kept", "prompt_id": "1", "prompt": "a prompt"}\n')
    (tmp_path / "benchmarks" / "SOURCES.md").write_text("# Benchmarks\n\n## kept\n- **Full name:** Kept Bench, 2026.\n- **License:** MIT.\n")
    settings = PipelineSettings.of(source_dir=str(tmp_path), data_dir=str(tmp_path / "data"))
    assert settings.resolve().partitions_dir == files.root
    resources = {"warehouse_db": Warehouse(db), "pipeline_settings": settings}

    result = dg.materialize([benchmark_catalog], instance=instance, resources=resources)
    assert result.success
    after_raw = _counts(files)
    assert after_raw["benchmark_prompts"] == {"kept": 1}
    assert after_raw["embedded_labels"] == {"gone": 2, "kept": 1}  # not the sources' to delete
    assert files.partitions("benchmark_prompts") == ["kept"]
    with warehouse.connect(db) as con:
        assert con.execute("select benchmark, n_prompts, error, full_name, licence from raw.benchmark_catalog").fetchall() == [
            ("kept", 1, None, "Kept Bench, 2026.", "MIT.")
        ]
    (event,) = result.get_asset_materialization_events()
    assert event.materialization.metadata["files_deleted"].value == {"raw.benchmark_prompts": 1}

    result = dg.materialize([label_catalog], instance=instance, resources=resources)
    assert result.success
    assert _counts(files) == {"benchmark_prompts": {"kept": 1}, "embedded_labels": {"kept": 1}, "embedded_judgements": {"kept": 2}}
    assert {table: files.partitions(table) for table in TABLES} == dict.fromkeys(TABLES, ["kept"])  # no file of `gone` is left
    with warehouse.connect(db) as con:
        assert con.execute("select * from labeling.label_catalog").fetchall() == [("kept", "v4", 2, 1, 1)]
    (event,) = result.get_asset_materialization_events()
    assert event.materialization.metadata["files_deleted"].value == {"labeling.embedded_labels": 1, "labeling.embedded_judgements": 1}


def test_source_files_are_the_files_the_loads_recorded(tmp_path):
    """raw/source_files publishes the file, size and hash each source's last load logged (the last
    row of its log wins); a benchmark without results (its optional file absent) has none, nor does
    a benchmark whose partition is gone."""
    from workbank_dagster.partitions import benchmarks_partitions
    from workbank_dagster.settings import PipelineSettings
    from workbank_dagster.sources import load_memo
    from workbank_dagster.sources.catalog import source_files

    db = tmp_path / "w.duckdb"
    frame = pd.DataFrame({"x": [1, 2]})
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(benchmarks_partitions.name, ["kept"])
    files = PartitionFiles(tmp_path / "partitions")

    def loaded(table, partition, record):
        load_memo.append_loads(files, table, {partition or load_memo.WHOLE_TABLE: record}, "run")

    loaded("onet_occupations", None, load_memo.load_record("0" * 64, frame, "onet/occupation_data_29_3.tsv", 122))
    loaded("onet_occupations", None, load_memo.load_record("a" * 64, frame, "onet/occupation_data_29_3.tsv", 123))
    loaded("benchmark_prompts", "kept", load_memo.load_record("b" * 64, frame, "benchmarks/kept.jsonl", 45))
    loaded("benchmark_results", "kept", load_memo.load_record("missing", frame.head(0), "results/kept.csv", None))
    loaded("benchmark_prompts", "gone", load_memo.load_record("c" * 64, frame, "benchmarks/gone.jsonl", 46))
    resources = {"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings.of(data_dir=str(tmp_path), partitions_dir=str(files.root))}
    assert dg.materialize([source_files], instance=instance, resources=resources).success
    with warehouse.connect(db) as con:
        rows = con.execute("select file, bytes, sha256, raw_table, benchmark from raw.source_files order by file").fetchall()
    assert rows == [
        ("benchmarks/kept.jsonl", 45, "b" * 64, "benchmark_prompts", "kept"),
        ("onet/occupation_data_29_3.tsv", 123, "a" * 64, "onet_occupations", None),
    ]


def test_the_tables_from_before_the_files_are_dropped_by_the_migration_and_only_there(tmp_path):
    """The warehouse tables the per-benchmark rows lived in before they moved to files (and those the
    loads and label keys were recorded in before their materializations) are dropped by `cli migrate`,
    once; the run's catalogs no longer touch the warehouse when they prune."""
    from workbank_dagster.labeling.catalog import prune_removed as prune_labels
    from workbank_dagster.sources.catalog import prune_removed as prune_sources

    db = tmp_path / "w.duckdb"
    retired = ("raw._source_loads", "raw.benchmark_prompts", "raw._benchmark_file_errors", "labeling.embedded_labels", "labeling.embedded_label_inputs")
    with warehouse.connect(db) as con:
        con.execute("create schema raw; create schema labeling")
        for table in (*retired, "raw.onet_occupations", "labeling.label_catalog"):
            con.execute(f"create table {table} (benchmark VARCHAR)")
    files = PartitionFiles(tmp_path / "partitions")
    assert prune_sources(files, ["kept"]) == {} and prune_labels(files, ["kept"]) == {}
    env = {"WORKBANK_DUCKDB_PATH": str(db), "WORKBANK_DATA_DIR": str(tmp_path), "DAGSTER_HOME": str(tmp_path / "home")}
    for run in ("first", "second"):
        completed = subprocess.run([sys.executable, "-m", "workbank_dagster.cli", "migrate"], env={**os.environ, **env},
                                   capture_output=True, text=True, check=True)
        expected = sorted(f"dropped {t}" for t in retired) if run == "first" else ["nothing to migrate"]
        assert sorted(completed.stdout.splitlines()) == expected, completed.stdout
    with warehouse.connect(db) as con:
        assert [t for t in retired if warehouse.table_exists(con, *t.split("."))] == []
        assert warehouse.table_exists(con, "raw", "onet_occupations") and warehouse.table_exists(con, "labeling", "label_catalog")
