"""What a benchmark asks of every prompt: its harness's instruction text, as evidence of the work (#38).

A benchmark's prompts often say little about the work they ask for: a GitHub issue, a Kaggle page, a
SQL question about invoices. The harness that runs the benchmark wraps every prompt in its own
instruction ("resolve the issue by editing the repository", "train a model and write
submission.csv", "act as an expert software developer"), and that text says what the work is. It is
data about the benchmark, kept with its provenance in `benchmarks/instructions.jsonl` (one record
per benchmark, the text verbatim from the benchmark's public repository or package at a pinned
commit or version), read and checked here, written per benchmark by `raw/benchmark_instructions`
(one row, or none), and read from there by the judges as benchmark-level evidence
(labeling/narrowing.py, InstructionEvidence). A benchmark without a record is labeled as before. Nothing here
knows any benchmark by name: a record is matched to a benchmark by its slug, like the benchmark's
own files.

Record fields: `benchmark` (slug), `kind` (`harness`: the instruction the harness wraps around
every prompt; `readme`: the task statement of the benchmark's README, where it has no harness text),
`text` (a string, or a list of verbatim segments, joined with a space), `source` (`repo`, `commit`,
`path`, `licence`) and/or `pypi` (`package`, `version`, `path`, `filename`, `sha256`), and
`source_sha256` (of the file the text was read from).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..common import SLUG_PATTERN, text_sha256
from .validate import SourceFormatError, decode_utf8, jsonl_objects

KINDS = ("harness", "readme")
INSTRUCTION_COLUMNS = [
    "benchmark",
    "kind",
    "instruction",
    "instruction_sha256",
    "source_repo",
    "source_commit",
    "source_path",
    "licence",
    "pypi_package",
    "pypi_version",
    "pypi_path",
    "source_sha256",
]


def normalise(text: str | list[str]) -> str:
    """The text as the judge reads it: segments joined with a space, every run of whitespace one space."""
    segments = [text] if isinstance(text, str) else list(text)
    return " ".join(" ".join(segments).split())


@dataclass(frozen=True)
class Instruction:
    benchmark: str
    kind: str
    text: str
    source: dict
    pypi: dict
    source_sha256: str


def _require(record: dict, field: str, path: Path, line: int, column: str):
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        raise SourceFormatError(path, f"bad or missing {column}", line=line, column=column, expected="a non-empty string", found=value)
    return value


def read_instructions(path: Path) -> dict[str, Instruction]:
    """benchmark → its instruction, from a JSONL file; every problem names the file, line and field.

    A record with `text` null (no instruction text was found for that benchmark) is skipped: the
    benchmark is labeled without one."""
    out: dict[str, Instruction] = {}
    if not path.is_file():
        return out
    for line, record in jsonl_objects(path, decode_utf8(path)):
        slug = _require(record, "benchmark", path, line, "benchmark")
        if not SLUG_PATTERN.match(slug):
            raise SourceFormatError(path, "unsafe benchmark slug", line=line, column="benchmark", expected=SLUG_PATTERN.pattern, found=slug)
        if slug in out:
            raise SourceFormatError(path, f"benchmark {slug!r} is given twice", line=line, column="benchmark", expected="one record per benchmark")
        if record.get("text") is None:
            continue
        text = record["text"]
        if not (isinstance(text, str) or (isinstance(text, list) and text and all(isinstance(s, str) for s in text))) or not normalise(text):
            raise SourceFormatError(path, "bad text", line=line, column="text", expected="a non-empty string or list of strings", found=text)
        kind = record.get("kind")
        if kind not in KINDS:
            raise SourceFormatError(path, "bad kind", line=line, column="kind", expected=" or ".join(KINDS), found=kind)
        source = record.get("source") or {}
        pypi = record.get("pypi") or {}
        if not source and not pypi:
            raise SourceFormatError(path, "no provenance", line=line, column="source", expected="a source (repo, commit, path) or a pypi location")
        if source:
            for field in ("repo", "commit", "path"):
                _require(source, field, path, line, f"source.{field}")
        if pypi:
            for field in ("package", "version", "path"):
                _require(pypi, field, path, line, f"pypi.{field}")
        out[slug] = Instruction(slug, kind, normalise(text), source, pypi, str(record.get("source_sha256") or ""))
    return out


def instruction_rows(instructions: dict[str, Instruction], benchmarks: list[str]) -> pd.DataFrame:
    """One row per benchmark that has an instruction, with its provenance (INSTRUCTION_COLUMNS)."""
    rows = []
    for slug in benchmarks:
        found = instructions.get(slug)
        if found is None:
            continue
        rows.append(
            (
                slug,
                found.kind,
                found.text,
                text_sha256(found.text),
                found.source.get("repo"),
                found.source.get("commit"),
                found.source.get("path"),
                found.source.get("licence"),
                found.pypi.get("package"),
                found.pypi.get("version"),
                found.pypi.get("path"),
                found.source_sha256 or None,
            )
        )
    return pd.DataFrame(rows, columns=INSTRUCTION_COLUMNS).astype("string")
