"""The per-benchmark tables as files (#18): a partition's file is whole or absent, never half-written;
each layer's files are its own to prune; the per-benchmark steps never open the warehouse."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import dagster as dg
import pandas as pd
import pyarrow
import pytest

from workbank_dagster.common import file_sha256
from workbank_dagster.partition_files import FILE_HASHES, READING, PartitionFiles

WRITER = """
import sys, pandas as pd
from workbank_dagster.partition_files import PartitionFiles
files = PartitionFiles(sys.argv[1])
frame = pd.DataFrame({"benchmark": "b", "prompt": ["x" * 200] * 400_000, "n": range(400_000)})
print("writing", flush=True)
while True:
    files.write("benchmark_prompts", "b", frame)
"""


def test_a_write_killed_halfway_leaves_the_old_file_whole_and_the_next_prune_repairs(tmp_path):
    files = PartitionFiles(tmp_path)
    old = pd.DataFrame({"benchmark": ["b"], "prompt": ["the old one"], "n": [0]})
    files.write("benchmark_prompts", "b", old)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "writing"
        # Kill it while a temporary file is being written (the scratch file is there, not yet renamed).
        deadline = time.monotonic() + 60
        while not list((tmp_path / "benchmark_prompts").glob(".*.tmp")) and time.monotonic() < deadline:
            time.sleep(0.01)
        writer.send_signal(signal.SIGKILL)
        writer.wait(30)
    finally:
        if writer.poll() is None:
            writer.kill()
    scratch = list((tmp_path / "benchmark_prompts").glob(".*.tmp"))
    assert scratch, "the writer was not killed mid-write: the test proved nothing"
    assert files.partitions("benchmark_prompts") == ["b"]  # the scratch file is not a partition
    found = files.read("benchmark_prompts", ["b"])
    assert len(found) in (1, 400_000)  # the old file, or a new one written whole: never a part of one
    # The next prune (the catalog step of every run) removes what the killed write left.
    assert files.remove_except(["benchmark_prompts"], ["b"]) == {}
    assert not list((tmp_path / "benchmark_prompts").glob(".*.tmp"))


def test_a_write_that_fails_keeps_the_old_file(tmp_path):
    files = PartitionFiles(tmp_path)
    files.write("t", "b", pd.DataFrame({"x": [1]}))
    with pytest.raises(pyarrow.ArrowInvalid):
        files.write("t", "b", pd.DataFrame({"x": [object()]}))  # pyarrow cannot write it
    assert files.read("t")["x"].tolist() == [1] and not list((tmp_path / "t").glob(".*"))


def test_partitions_are_read_and_pruned_by_name(tmp_path):
    files = PartitionFiles(tmp_path)
    for name in ("a", "b", "c"):
        files.write("t", name, pd.DataFrame({"benchmark": [name], "x": [len(name)]}))
    assert files.read("t", ["c", "a", "zz"])["benchmark"].tolist() == ["a", "c"]
    assert files.query("t", "select count(*) as n from {table}", ["a", "b"])["n"].tolist() == [2]
    assert files.query("t", "select 1", ["zz"]) is None
    before = files.content_sha256("t")
    assert files.remove_except(["t", "never_written"], ["a"]) == {"t": 2}
    assert files.partitions("t") == ["a"] and files.content_sha256("t") != before
    assert files.content_sha256("never_written") is None


def test_the_per_benchmark_steps_never_open_the_warehouse():
    """They need no `warehouse_db`: what they read and write are files, so backfills of different
    benchmarks run side by side while another process holds the warehouse."""
    from workbank_dagster.definitions import defs

    partitioned = {
        assets_def.op.name: assets_def.required_resource_keys
        for assets_def in defs.assets
        if isinstance(assets_def, dg.AssetsDefinition) and assets_def.partitions_def is not None and assets_def.partitions_def.name == "benchmarks"
    }
    assert set(partitioned) == {"raw__benchmark_prompts", "raw__benchmark_results", "raw__benchmark_instructions", "embedded_judge_labels", "llm_judge_labels"}
    assert {name: keys for name, keys in partitioned.items() if "warehouse_db" in keys} == {}


def _age(path, seconds: float = 60.0) -> None:
    """Set a file's modification time `seconds` back (past the racy window)."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def test_file_hashes_are_kept_by_size_and_time_and_read_again_when_either_moves(tmp_path):
    files = PartitionFiles(tmp_path)
    for name in ("a", "b"):
        _age(files.write("t", name, pd.DataFrame({"x": [len(name)]})))
    first = files.file_sha256s(["t"])["t"]
    assert {name: sha for name, (_, _, sha) in first.items()} == {name: file_sha256(files.path("t", name)) for name in ("a", "b")}
    # A kept hash is what answers while the file's size and time are those it was hashed at: one
    # planted in the kept file comes back, so the file was not read again.
    kept = pd.read_parquet(tmp_path / FILE_HASHES)
    kept.loc[kept["file_name"] == "a.parquet", "sha256"] = "planted"
    kept.to_parquet(tmp_path / FILE_HASHES, index=False)
    assert files.file_sha256s(["t"])["t"]["a"][2] == "planted"
    # The same file written again (same size) with another time is hashed again.
    _age(files.write("t", "a", pd.DataFrame({"x": [1]})), 30.0)
    assert files.file_sha256s(["t"])["t"]["a"][2] == file_sha256(files.path("t", "a"))
    # Another table's call keeps this table's hashes; a missing or unreadable kept file means hashing all.
    files.file_sha256s(["u"])
    assert set(pd.read_parquet(tmp_path / FILE_HASHES)["file_name"]) == {"a.parquet", "b.parquet"}
    (tmp_path / FILE_HASHES).write_bytes(b"not parquet")
    assert files.file_sha256s(["t"])["t"] == files.file_sha256s(["t"])["t"]


def test_a_file_hashed_right_after_it_was_written_is_not_kept(tmp_path):
    """Written again within the same tick of the clock with the same size, it could keep its time:
    its hash would then be stale (git's racily clean files). It is hashed again next time."""
    files = PartitionFiles(tmp_path)
    files.write("t", "fresh", pd.DataFrame({"x": [1]}))
    _age(files.write("t", "old", pd.DataFrame({"x": [2]})))
    hashes = files.file_sha256s(["t"])["t"]
    assert set(hashes) == {"fresh", "old"}
    assert pd.read_parquet(tmp_path / FILE_HASHES)["file_name"].tolist() == ["old.parquet"]
    assert files.content_sha256("t") == files.content_sha256s(["t"])["t"] is not None


def test_a_folder_that_cannot_take_the_kept_hashes_still_gives_them(tmp_path):
    """The warehouse step's key reads every file's hash; where the kept-hashes file cannot be
    written (here a folder stands in its way; a read-only copy of the data does the same), the
    hashes are still given, and nothing is kept."""
    files = PartitionFiles(tmp_path)
    _age(files.write("t", "a", pd.DataFrame({"x": [1]})))
    (tmp_path / FILE_HASHES).mkdir()
    assert files.content_sha256s(["t"])["t"] is not None
    assert files.file_sha256s(["t"])["t"]["a"][2] == file_sha256(files.path("t", "a"))
    assert (tmp_path / FILE_HASHES).is_dir()


def test_a_query_while_another_run_replaces_its_files_sees_one_version_of_each(tmp_path):
    """DuckDB opens a file more than once in one query (its schema when binding, its rows when
    scanning). A file renamed over in between used to fail the query ("Invalid data", "Out of
    buffer"), as when `make run` read the judgements while a backfill wrote them. A query now sees
    each file as one version, whichever it is, and leaves no link behind."""
    import threading

    files = PartitionFiles(tmp_path)
    small = pd.DataFrame({"benchmark": "b", "prompt": ["x" * 20] * 1_000, "n": range(1_000)})
    large = pd.DataFrame({"benchmark": "b", "prompt": ["y" * 20] * 50_000, "n": range(50_000)})
    files.write("benchmark_prompts", "a", small)
    files.write("benchmark_prompts", "b", small)
    stop = threading.Event()

    def replace_again_and_again():
        while not stop.is_set():
            for frame in (large, small):
                files.write("benchmark_prompts", "b", frame)

    writer = threading.Thread(target=replace_again_and_again)
    writer.start()
    errors, counts = [], set()
    try:
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            try:
                found = files.query("benchmark_prompts", "select count(*) as n, sum(n) as total from {table}")
            except Exception as error:  # noqa: BLE001 - every kind is the failure this test is about
                errors.append(f"{type(error).__name__}: {error}")
                continue
            counts.add((int(found.n[0]), int(found.total[0])))
    finally:
        stop.set()
        writer.join()
    assert not errors, f"{len(errors)} queries failed, e.g. {errors[:3]}"
    small_sum = sum(range(1_000))
    assert counts <= {(2_000, 2 * small_sum), (51_000, small_sum + sum(range(50_000)))}, counts
    assert len(counts) == 2, "the writer never got a file in between: the test tested nothing"
    assert not any((tmp_path / READING).iterdir())


def test_a_query_where_no_link_can_be_made_reads_the_files_themselves(tmp_path):
    """A folder where no link can be made (here a file stands in the links' way; a read-only copy of
    the data does the same) is still queried, in place, and a partition removed since it was listed
    has no rows."""
    files = PartitionFiles(tmp_path)
    files.write("t", "a", pd.DataFrame({"x": [1, 2]}))
    (tmp_path / READING).write_text("not a folder")
    assert files.query("t", "select sum(x) as s from {table}").s[0] == 3
    (tmp_path / READING).unlink()
    files.write("t", "b", pd.DataFrame({"x": [5]}))
    assert files.query("t", "select sum(x) as s from {table}").s[0] == 8
    assert files.query("t", "select sum(x) as s from {table}", ["b", "c"]).s[0] == 5
    with files._snapshot([files.path("t", "a"), files.path("t", "gone"), files.path("t", "b")]) as links:
        assert [pd.read_parquet(link).x.tolist() for link in links] == [[1, 2], [5]]


def test_a_query_deletes_the_links_a_killed_reader_left_and_no_running_query_s(tmp_path):
    """A reader killed mid-query leaves its folder of links, which holds old file versions on disk;
    the next query deletes it once it is hours old, and leaves a recent one (a query still running)."""
    from workbank_dagster.partition_files import LEFT_BY_A_KILLED_READER_SECONDS

    files = PartitionFiles(tmp_path)
    files.write("t", "a", pd.DataFrame({"x": [1, 2]}))
    killed, running = tmp_path / READING / "query-killed", tmp_path / READING / "query-running"
    for folder in (killed, running):
        folder.mkdir(parents=True)
        os.link(files.path("t", "a"), folder / "0.parquet")
    hours_ago = time.time() - LEFT_BY_A_KILLED_READER_SECONDS - 60
    os.utime(killed, (hours_ago, hours_ago))
    assert files.query("t", "select sum(x) as s from {table}").s[0] == 3
    assert not killed.exists()
    assert (running / "0.parquet").is_file()
    assert sorted(p.name for p in (tmp_path / READING).iterdir()) == ["query-running"]


def test_frozen_files_stay_as_they_were_while_the_folder_moves_on_and_their_hashes_come_back(tmp_path):
    """A dbt build reads the partition files through `frozen`: links under the same names, which a
    write renamed over a file, or a removal, leaves as they were; the hashes kept while the block
    ran come back to the folder; the links go when it ends."""
    files = PartitionFiles(tmp_path)
    files.write("t", "a", pd.DataFrame({"x": [1]}))
    files.write("t", "b", pd.DataFrame({"x": [2]}))
    files.write("u", "a", pd.DataFrame({"y": [3]}))
    _age(files.path("t", "a"))
    _age(files.path("t", "b"))
    with files.frozen(["t"], "build") as frozen:
        assert frozen.root == files.frozen_root("build") == tmp_path / READING / "build"
        assert frozen.partitions("t") == ["a", "b"] and frozen.partitions("u") == []
        files.write("t", "a", pd.DataFrame({"x": [10, 11]}))
        files.remove("t", "b")
        assert pd.read_parquet(frozen.path("t", "a")).x.tolist() == [1]
        assert frozen.query("t", "select sum(x) as s from {table}").s[0] == 3
        hashes = frozen.file_sha256s(["t"])["t"]
    assert not (tmp_path / READING / "build").exists()
    assert files.read("t").x.tolist() == [10, 11]
    kept = pd.read_parquet(tmp_path / FILE_HASHES)
    assert sorted(kept.file_name) == ["a.parquet", "b.parquet"]  # as hashed in the block: the next build of an unchanged file reads none
    assert kept.set_index("file_name").sha256.to_dict() == {f"{name}.parquet": sha for name, (_, _, sha) in hashes.items()}


def test_frozen_where_no_link_can_be_made_is_the_folder_itself(tmp_path):
    files = PartitionFiles(tmp_path)
    files.write("t", "a", pd.DataFrame({"x": [1]}))
    (tmp_path / READING).write_text("not a folder")
    with files.frozen(["t"], "build") as frozen:
        assert frozen.root == tmp_path
        assert frozen.read("t").x.tolist() == [1]


def test_the_tables_are_the_folders_but_the_hidden_ones(tmp_path):
    """A query leaves its (empty) links folder behind; it is no table."""
    files = PartitionFiles(tmp_path)
    files.write("t", "a", pd.DataFrame({"x": [1]}))
    files.write_shared("tasks", pd.DataFrame({"y": [1]}))
    files.query("t", "select * from {table}")
    assert (tmp_path / READING).is_dir()
    assert files.tables() == ["_shared", "t"]
