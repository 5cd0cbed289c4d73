"""Each layer prunes its own rows: when a benchmark's partition is gone, `raw/benchmark_catalog`
deletes its raw rows and `labeling/label_catalog` its labeling rows; neither touches the other's."""

from __future__ import annotations

import dagster as dg
import pandas as pd

from workbank_dagster import warehouse
from workbank_dagster.labeling.catalog import label_catalog
from workbank_dagster.resources import Warehouse
from workbank_dagster.settings import PipelineSettings
from workbank_dagster.sources.catalog import benchmark_attribution, benchmark_catalog


def _counts(db) -> dict[str, dict[str, int]]:
    with warehouse.connect(db) as con:
        return {
            f"{schema}.{table}": dict(con.execute(f"select benchmark, count(*) from {schema}.{table} group by 1 order by 1").fetchall())
            for schema, table in (("raw", "benchmark_prompts"), ("labeling", "embedded_labels"), ("labeling", "embedded_judgements"))
        }


def test_each_catalog_prunes_its_own_layer(tmp_path):
    db = tmp_path / "w.duckdb"
    with warehouse.connect(db) as con:
        con.execute("create schema raw; create schema labeling")
        con.execute("create table raw.benchmark_prompts as select * from (values ('kept', '1', 'a prompt'), ('gone', '1', 'another')) v(benchmark, prompt_id, prompt)")
        con.execute(
            "create table labeling.embedded_labels as select * from (values ('kept', '1', 7, 1, 0.5, 'v4', 'h1'), ('gone', '1', 8, 1, 0.4, 'v4', 'h2'), "
            "('gone', '1', 9, 2, 0.3, 'v4', 'h2')) v(benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash)"
        )
        con.execute(
            "create table labeling.embedded_judgements as select * from (values ('kept', '1', 'v4', 'h1', 'labeled'), ('kept', '2', 'v4', 'h3', 'abstained'), "
            "('gone', '1', 'v4', 'h2', 'labeled')) v(benchmark, prompt_id, labeler, prompt_hash, status)"
        )
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("benchmarks", ["kept"])
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "SOURCES.md").write_text("# Benchmarks\n\n## kept\n- **Full name:** Kept Bench, 2026.\n- **License:** MIT.\n")
    resources = {"warehouse_db": Warehouse(db), "pipeline_settings": PipelineSettings(source_dir=str(tmp_path))}

    assert dg.materialize([benchmark_catalog], instance=instance, resources=resources).success
    after_raw = _counts(db)
    assert after_raw["raw.benchmark_prompts"] == {"kept": 1}
    assert after_raw["labeling.embedded_labels"] == {"gone": 2, "kept": 1}  # not the sources' to delete
    with warehouse.connect(db) as con:
        assert con.execute("select benchmark, n_prompts, error, full_name, licence from raw.benchmark_catalog").fetchall() == [
            ("kept", 1, None, "Kept Bench, 2026.", "MIT.")
        ]

    result = dg.materialize([label_catalog], instance=instance, resources=resources)
    assert result.success
    after_labeling = _counts(db)
    assert after_labeling == {"raw.benchmark_prompts": {"kept": 1}, "labeling.embedded_labels": {"kept": 1}, "labeling.embedded_judgements": {"kept": 2}}
    with warehouse.connect(db) as con:
        assert con.execute("select * from labeling.label_catalog").fetchall() == [("kept", "v4", 2, 1, 1)]
    (event,) = result.get_asset_materialization_events()
    deleted = event.materialization.metadata["rows_deleted"].value
    assert deleted == {"labeling.embedded_labels": 2, "labeling.embedded_judgements": 1}


def test_benchmark_licences_come_from_sources_md(tmp_path):
    """Each benchmark's full name and licence as the source folder's benchmarks/SOURCES.md states
    them; a benchmark without a section, or a section without a licence line, says so."""
    sources = tmp_path / "SOURCES.md"
    sources.write_text("# B\n\n## alpha\n- **Full name:** Alpha Bench, 2024.\n- **License:** MIT.\n\n## beta\n- **Full name:** Beta.\n")
    found = benchmark_attribution(sources, ["alpha", "beta", "gamma"]).set_index("benchmark")
    assert found.loc["alpha", "full_name"] == "Alpha Bench, 2024." and found.loc["alpha", "licence"] == "MIT."
    assert "not stated" in found.loc["beta", "licence"]
    assert found.loc["gamma", "full_name"] == "gamma" and "no entry" in found.loc["gamma", "licence"]
    assert list(benchmark_attribution(tmp_path / "missing.md", ["alpha"])["licence"]) == ["no entry in benchmarks/SOURCES.md: licence unknown"]


def test_source_files_are_the_files_the_loads_recorded(tmp_path):
    """raw/source_files publishes the file, size and hash each load recorded in its materialization;
    a benchmark without results (its optional file absent) has none, nor does a benchmark whose
    partition is gone."""
    from workbank_dagster.partitions import benchmarks_partitions
    from workbank_dagster.sources import load_memo
    from workbank_dagster.sources.catalog import source_files

    db = tmp_path / "w.duckdb"
    frame = pd.DataFrame({"x": [1, 2]})
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(benchmarks_partitions.name, ["kept"])

    def loaded(table, partition, record):
        metadata = {load_memo.LOADS_METADATA: load_memo.loads_metadata({partition or load_memo.WHOLE_TABLE: record})}
        instance.report_runless_asset_event(dg.AssetMaterialization(dg.AssetKey(["raw", table]), partition=partition, metadata=metadata))

    loaded("onet_occupations", None, load_memo.load_record("a" * 64, frame, "onet/occupation_data_29_3.tsv", 123))
    loaded("benchmark_prompts", "kept", load_memo.load_record("b" * 64, frame, "benchmarks/kept.jsonl", 45))
    loaded("benchmark_results", "kept", load_memo.load_record("missing", frame.head(0), "results/kept.csv", None))
    loaded("benchmark_prompts", "gone", load_memo.load_record("c" * 64, frame, "benchmarks/gone.jsonl", 46))
    assert dg.materialize([source_files], instance=instance, resources={"warehouse_db": Warehouse(db)}).success
    with warehouse.connect(db) as con:
        rows = con.execute("select file, bytes, sha256, raw_table, benchmark from raw.source_files order by file").fetchall()
    assert rows == [
        ("benchmarks/kept.jsonl", 45, "b" * 64, "benchmark_prompts", "kept"),
        ("onet/occupation_data_29_3.tsv", 123, "a" * 64, "onet_occupations", None),
    ]


def test_the_table_the_loads_were_recorded_in_before_is_dropped(tmp_path):
    from workbank_dagster.sources.catalog import prune_removed

    with warehouse.connect(tmp_path / "w.duckdb") as con:
        con.execute("create schema raw")
        con.execute("create table raw._source_loads (table_name VARCHAR, partition_key VARCHAR)")
        prune_removed(con, ["kept"])
        assert not warehouse.table_exists(con, "raw", "_source_loads")
