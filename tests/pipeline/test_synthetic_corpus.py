"""bench/synthetic_corpus.py: synthetic benchmarks drawn from a real run's partition files.

The real run is the session's small run (three real benchmarks, their real labels by the default
judge), read only. That the synthetic files pass the dbt tests real files pass is shown where dbt
builds on them (tests/transform/test_incremental.py, every test of `dbt build`).
"""

from __future__ import annotations

import hashlib
import sys

import pandas as pd

from workbank_dagster.partition_files import PartitionFiles
from workbank_dagster.settings import EMBEDDED_LABELER, REPO_ROOT
from workbank_dagster.sources.load_memo import is_load_log

sys.path.insert(0, str(REPO_ROOT / "bench"))
from synthetic_corpus import benchmark_frames, generate, read_profile, write_benchmark  # noqa: E402

PER_PROMPT = ("benchmark_prompts", "benchmark_results", "embedded_labels", "embedded_judgements")


def _frames(folder, table: str) -> pd.DataFrame:
    return PartitionFiles(folder).read(table)


def _schema(files: PartitionFiles, table: str, slug: str) -> tuple:
    return tuple(files.read(table, [slug]).dtypes.astype(str).items())


def test_the_corpus_is_seeded_and_each_benchmark_its_own(tmp_path, small_base_run):
    profile = read_profile(small_base_run / "data" / "partitions")
    generate(tmp_path / "a", profile, 3, 200, seed=11)
    generate(tmp_path / "b", profile, 3, 200, seed=11)
    write_benchmark(PartitionFiles(tmp_path / "c"), profile, "syn-00001", 200, seed=11)  # alone, not beside the others
    a, b, c = (PartitionFiles(tmp_path / name) for name in "abc")
    for table in profile.tables:
        assert a.partitions(table) == b.partitions(table)
        for slug in a.partitions(table):
            pd.testing.assert_frame_equal(a.read(table, [slug]), b.read(table, [slug]))
        assert c.partitions(table) == (["syn-00001"] if a.path(table, "syn-00001").is_file() else [])
        if c.partitions(table):
            pd.testing.assert_frame_equal(c.read(table, ["syn-00001"]), a.read(table, ["syn-00001"]))
    other = benchmark_frames(profile, "syn-00001", 200, seed=11, version=2)["benchmark_prompts"]
    assert set(other["prompt_hash"]).isdisjoint(_frames(tmp_path / "a", "benchmark_prompts")["prompt_hash"])
    assert not benchmark_frames(profile, "syn-00001", 200, seed=12)["benchmark_prompts"]["prompt"].equals(other["prompt"])


def test_synthetic_rows_are_the_real_ones_resampled(tmp_path, small_base_run):
    real = PartitionFiles(small_base_run / "data" / "partitions")
    profile = read_profile(real.root)
    assert sorted(t.name for t in profile.templates) == real.partitions("benchmark_prompts")
    generate(tmp_path, profile, 6, 300, seed=5)
    prompts = _frames(tmp_path, "benchmark_prompts")
    labels = _frames(tmp_path, "embedded_labels")
    judgements = _frames(tmp_path, "embedded_judgements")
    real_labels = real.read("embedded_labels")
    real_judgements = real.read("embedded_judgements")
    # The same tables, and each file the columns and types of a real file of its table.
    ours = PartitionFiles(tmp_path)
    assert set(profile.tables) == {
        name for name in real.tables() if name != "_shared" and not name.endswith("_file_errors") and not is_load_log(name)
    }
    for table in profile.tables:
        real_schemas = {_schema(real, table, slug) for slug in real.partitions(table)}
        assert ours.partitions(table) and all(_schema(ours, table, slug) in real_schemas for slug in ours.partitions(table)), table
    # One row per prompt; the hash is the text's; the judge's records name existing prompts with their hash.
    assert len(prompts) == 6 * 300 and not prompts.duplicated(["benchmark", "prompt_id"]).any()
    assert all(hashlib.sha256(text.encode()).hexdigest() == digest for text, digest in zip(prompts["prompt"], prompts["prompt_hash"]))
    keyed = prompts.set_index(["benchmark", "prompt_id"])["prompt_hash"]
    for frame in (labels, judgements):
        assert (keyed.reindex(pd.MultiIndex.from_frame(frame[["benchmark", "prompt_id"]])).to_numpy() == frame["prompt_hash"].to_numpy()).all()
    assert len(judgements) == len(prompts) and not labels.duplicated(["benchmark", "prompt_id", "task_id"]).any()
    # The default judge only, and only what it did on the real prompts: its tasks, ranks, statuses, reasons.
    assert set(labels["labeler"]) == set(judgements["labeler"]) == {EMBEDDED_LABELER}
    default = real_labels[real_labels["labeler"] == EMBEDDED_LABELER]
    assert set(labels["task_id"]) <= set(default["task_id"]) and set(labels["rank"]) <= set(default["rank"])
    real_default = real_judgements[real_judgements["labeler"] == EMBEDDED_LABELER]
    assert set(zip(judgements["status"], judgements["reason"])) <= set(zip(real_default["status"], real_default["reason"]))
    labeled = judgements[judgements["status"] == "labeled"]
    n_labels = labels.groupby(["benchmark", "prompt_id"]).size()
    assert (n_labels.reindex(pd.MultiIndex.from_frame(labeled[["benchmark", "prompt_id"]])).to_numpy() == labeled["n_labels"].to_numpy()).all()
    # Prompt lengths are the real ones' (a text is cut at a word, so at most the real length).
    assert prompts["prompt"].str.len().max() <= real.read("benchmark_prompts")["prompt"].str.len().max()
