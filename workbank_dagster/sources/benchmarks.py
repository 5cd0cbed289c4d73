"""Benchmark prompts (`benchmarks/<slug>.jsonl`) and per-prompt model results (`results/<slug>.csv`).

One benchmark is one partition (docs/method.md §3). A prompt is identified by (benchmark, prompt_id);
its `prompt_hash` (SHA-256 of the text) keys the judgement cache and finds duplicate texts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..common import SLUG_PATTERN, text_sha256
from .validate import (
    SourceFormatError,
    check_unique,
    decode_utf8,
    jsonl_objects,
    read_delimited,
    require_columns,
    require_file,
    to_float,
    to_text,
)

RESULT_COLUMNS = ["benchmark", "model", "prompt_id", "score"]


def check_slug(slug: str, where: Path | str) -> str:
    if not SLUG_PATTERN.match(slug):
        raise SourceFormatError(where, "unsafe benchmark slug", expected=f"a slug matching {SLUG_PATTERN.pattern}", found=slug)
    return slug


def slug_files(folder: Path, suffix: str) -> dict[str, Path]:
    """The `<slug><suffix>` files of a folder by slug, sorted (none when the folder does not exist):
    benchmark prompts (`.jsonl`), results and audits (`.csv`). The one listing of them, with one
    rule for a bad name: a file whose name is not a safe slug is a SourceFormatError naming the
    file and the slug rule, never skipped (it would be lost without a word) and never a warning."""
    if not folder.is_dir():
        return {}
    return {check_slug(path.name[: -len(suffix)], path): path for path in sorted(folder.glob(f"*{suffix}"))}


def read_benchmark_prompts(path: Path) -> pd.DataFrame:
    """Parse one JSONL file; every problem names the file and line."""
    slug = check_slug(path.stem, path)
    require_file(path)
    text = decode_utf8(path)
    rows = []
    for number, record in jsonl_objects(path, text):
        for field in ("benchmark", "prompt_id", "prompt"):
            if field not in record:
                raise SourceFormatError(path, "missing field", line=number, column=field, expected="fields benchmark, prompt_id, prompt")
        if record["benchmark"] != slug:
            raise SourceFormatError(path, "benchmark does not match the file name", line=number, column="benchmark", expected=repr(slug), found=record["benchmark"])
        prompt_id = record["prompt_id"]
        if isinstance(prompt_id, bool) or not isinstance(prompt_id, (str, int)) or str(prompt_id).strip() == "":
            raise SourceFormatError(path, "bad prompt_id", line=number, column="prompt_id", expected="a non-empty string", found=prompt_id)
        prompt = record["prompt"]
        if not isinstance(prompt, str) or not prompt.strip():
            raise SourceFormatError(path, "empty or non-text prompt", line=number, column="prompt", expected="non-empty text", found=prompt)
        rows.append((slug, str(prompt_id), prompt, text_sha256(prompt), number))
    if not rows:
        raise SourceFormatError(path, "no prompts", expected="at least one JSON line")
    frame = pd.DataFrame(rows, columns=["benchmark", "prompt_id", "prompt", "prompt_hash", "source_line"])
    duplicated = frame.duplicated("prompt_id", keep=False)
    if duplicated.any():
        first = frame.loc[duplicated, "prompt_id"].iloc[0]
        lines = frame.loc[frame["prompt_id"] == first, "source_line"].tolist()
        raise SourceFormatError(path, f"duplicate prompt_id {first!r} on lines {lines[0]} and {lines[1]}", line=lines[1], column="prompt_id", expected="each prompt_id once")
    frame["source_line"] = frame["source_line"].astype("int64")
    return frame


def read_benchmark_results(path: Path, slug: str) -> pd.DataFrame:
    """Per-prompt scores; extra columns are kept as one JSON object per row."""
    raw = read_delimited(path, ",")
    require_columns(raw, path, RESULT_COLUMNS)
    frame = pd.DataFrame(
        {
            "benchmark": to_text(raw, "benchmark", path),
            "model": to_text(raw, "model", path),
            "prompt_id": to_text(raw, "prompt_id", path),
            "score": to_float(raw, "score", path, low=0.0, high=1.0),
        }
    )
    wrong = frame["benchmark"] != slug
    if wrong.any():
        position = int(wrong.to_numpy().nonzero()[0][0])
        raise SourceFormatError(path, "benchmark does not match the file name", line=position + 2, column="benchmark", expected=repr(slug), found=frame["benchmark"].iloc[position])
    extra_columns = [c for c in raw.columns if c not in RESULT_COLUMNS]
    frame["extra"] = [json.dumps(record, sort_keys=True) for record in raw[extra_columns].to_dict(orient="records")] if extra_columns else "{}"
    check_unique(frame, ["model", "prompt_id"], path, source=raw)
    return frame
