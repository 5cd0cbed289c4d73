"""One atomic write (workbank_dagster/atomic.py): a file is replaced whole by a new one written beside it,
or left as it was; never written in place, never left half-written."""

from __future__ import annotations

import os

import pytest

from workbank_dagster import atomic


def test_the_target_is_replaced_whole_by_a_new_file_beside_it(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    reader = open(target)  # a reader that opened the old file before the write
    try:
        with atomic.atomic_path(target) as scratch:
            assert scratch.parent == target.parent and scratch != target and atomic.is_temporary(scratch)
            scratch.write_text("new, and longer")
            assert target.read_text() == "old"  # nothing reaches the target before the block ends
        assert target.read_text() == "new, and longer"
        assert reader.read() == "old"  # a new file renamed over the old one: written in place, this would read the new text
    finally:
        reader.close()
    assert os.listdir(tmp_path) == ["out.json"]


def test_an_exception_in_the_block_leaves_the_old_file_and_no_temporary_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("a,b\n1,2\n")
    with pytest.raises(RuntimeError, match="half way"):
        with atomic.atomic_path(target) as scratch:
            scratch.write_text("a,b\n")
            raise RuntimeError("half way")
    assert target.read_text() == "a,b\n1,2\n"
    assert os.listdir(tmp_path) == ["out.csv"]


def test_two_writers_of_one_target_write_different_files(tmp_path):
    target = tmp_path / "prior.npz"
    with atomic.atomic_path(target) as first, atomic.atomic_path(target) as second:
        assert first != second
        first.write_bytes(b"1")
        second.write_bytes(b"2")
    assert target.read_bytes() == b"1"  # the last one renamed (the outer block ends last), whole
    assert os.listdir(tmp_path) == ["prior.npz"]


def test_write_text_and_bytes_make_the_folder_and_keep_the_usual_mode(tmp_path):
    old_umask = os.umask(0o022)
    try:
        text = atomic.write_text(tmp_path / "new" / "page.html", "ünïcode\n")
        data = atomic.write_bytes(tmp_path / "new" / "prior.npz", b"\x00\x01")
    finally:
        os.umask(old_umask)
    assert text.read_bytes() == "ünïcode\n".encode() and data.read_bytes() == b"\x00\x01"
    # As open(path, "w") would make them (a temporary file from mkstemp would be 0o600).
    assert {oct(path.stat().st_mode & 0o777) for path in (text, data)} == {oct(0o644)}
    assert sorted(os.listdir(tmp_path / "new")) == ["page.html", "prior.npz"]
