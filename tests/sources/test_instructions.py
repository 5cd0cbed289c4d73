"""Benchmark instruction texts (#38): read and checked by line and field, written per benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbank_dagster.sources.instructions import instruction_rows, normalise, read_instructions
from workbank_dagster.sources.validate import SourceFormatError

GOOD = {
    "benchmark": "tiny",
    "kind": "harness",
    "text": ["You are an expert  software\ndeveloper.", "Fix the issue."],
    "source": {"repo": "owner/tiny", "commit": "a" * 40, "path": "run.py", "licence": "MIT"},
    "pypi": None,
    "source_sha256": "b" * 64,
}


def _write(tmp_path: Path, *records) -> Path:
    path = tmp_path / "instructions.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_a_record_is_read_whitespace_normalised_with_its_provenance(tmp_path):
    found = read_instructions(_write(tmp_path, GOOD, {**GOOD, "benchmark": "none-found", "text": None}))
    assert set(found) == {"tiny"}  # a record whose text is null: labeled without one
    assert found["tiny"].text == "You are an expert software developer. Fix the issue."
    rows = instruction_rows(found, ["tiny", "other"])
    assert rows.to_dict("records")[0] == {
        "benchmark": "tiny", "kind": "harness", "instruction": "You are an expert software developer. Fix the issue.",
        "instruction_sha256": rows.at[0, "instruction_sha256"], "source_repo": "owner/tiny", "source_commit": "a" * 40,
        "source_path": "run.py", "licence": "MIT", "pypi_package": None, "pypi_version": None, "pypi_path": None, "source_sha256": "b" * 64,
    }
    assert len(rows) == 1 and len(rows.iloc[0]["instruction_sha256"]) == 64


def test_no_file_means_no_instructions(tmp_path):
    assert read_instructions(tmp_path / "absent.jsonl") == {}


@pytest.mark.parametrize(
    ("record", "where"),
    [
        ("{not json", "instructions.jsonl:2: not valid JSON"),
        ({**GOOD, "benchmark": "Bad Slug"}, "instructions.jsonl:2: column 'benchmark': unsafe benchmark slug"),
        ({**GOOD, "benchmark": "other", "kind": "blog"}, "instructions.jsonl:2: column 'kind': bad kind"),
        ({**GOOD, "benchmark": "other", "text": ["", " "]}, "instructions.jsonl:2: column 'text': bad text"),
        ({**GOOD, "benchmark": "other", "source": None}, "instructions.jsonl:2: column 'source': no provenance"),
        ({**GOOD, "benchmark": "other", "source": {"repo": "o/r", "path": "x"}}, "instructions.jsonl:2: column 'source.commit': bad or missing source.commit"),
        (GOOD, "instructions.jsonl:2: column 'benchmark': benchmark 'tiny' is given twice"),
    ],
)
def test_a_bad_record_names_its_file_line_and_field(tmp_path, record, where):
    path = _write(tmp_path, GOOD, record)
    with pytest.raises(SourceFormatError) as raised:
        read_instructions(path)
    assert where in str(raised.value)


def test_a_record_that_is_no_object_and_bytes_that_are_no_utf8_name_the_file(tmp_path):
    """The instruction file reads its lines as the prompt files do (validate.jsonl_objects)."""
    path = _write(tmp_path, GOOD, [1, 2])
    with pytest.raises(SourceFormatError, match=r"instructions.jsonl:2: not a JSON object"):
        read_instructions(path)
    path.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    with pytest.raises(SourceFormatError, match=r"instructions.jsonl"):
        read_instructions(path)


def test_normalise_joins_segments_and_collapses_whitespace():
    assert normalise(["a\n b", "c\t"]) == "a b c"
    assert normalise("  one   two ") == "one two"
