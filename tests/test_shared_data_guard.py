"""The session's guard over the shared data folder (tests/support/shared_guard.py, wired in conftest)."""

from __future__ import annotations

import os

import shared_guard


def test_a_write_through_a_link_a_new_file_and_a_removal_are_each_named(tmp_path):
    shared = tmp_path / "shared"
    (shared / "benchmarks").mkdir(parents=True)
    (shared / "benchmarks" / "a.jsonl").write_text('{"x": 1}\n')
    (shared / "b.csv").write_text("x\n1\n")
    (shared / "c.csv").write_text("y\n")
    reduced = tmp_path / "reduced"
    reduced.mkdir()
    (reduced / "a.jsonl").symlink_to(shared / "benchmarks" / "a.jsonl")  # as the reduced source folder links

    before = shared_guard.snapshot(shared)
    assert shared_guard.changes(before, shared) == []

    with open(reduced / "a.jsonl", "a") as f:  # a test that wrote through the reduced folder's link
        f.write('{"x": 2}\n')
    (shared / "cache.sqlite").write_bytes(b"")
    (shared / "c.csv").unlink()
    assert shared_guard.changes(before, shared) == ["added: cache.sqlite", "removed: c.csv", "modified: benchmarks/a.jsonl"]


def test_a_rewrite_of_the_same_bytes_counts(tmp_path):
    """A file rewritten with its own content is still a write: its modification time moves."""
    (tmp_path / "b.csv").write_text("x\n1\n")
    before = shared_guard.snapshot(tmp_path)
    size, mtime = before["b.csv"]
    (tmp_path / "b.csv").write_text("x\n1\n")
    os.utime(tmp_path / "b.csv", ns=(mtime + 1_000_000, mtime + 1_000_000))
    assert shared_guard.changes(before, tmp_path) == ["modified: b.csv"]
