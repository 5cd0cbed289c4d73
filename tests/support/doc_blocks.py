"""The configuration the docs show, read as the tests check it: a YAML block marked
`<!-- config: name -->` (docs/scaling.md, docs/pipeline.md)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml


def config_block(doc: Path, name: str, text: str | None = None) -> dict:
    """The fenced YAML block right after `<!-- config: name -->` in `doc` (or in `text`, a version
    of it), parsed."""
    text = doc.read_text(encoding="utf-8") if text is None else text
    match = re.search(rf"<!-- config: {re.escape(name)} -->\s*```yaml\n(.*?)\n```", text, re.DOTALL)
    assert match, f"{doc.parent.name}/{doc.name} has no ```yaml block after <!-- config: {name} -->"
    return yaml.safe_load(match.group(1))
