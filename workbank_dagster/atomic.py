"""Files written whole: a new file is written under a temporary name beside its target, then renamed over it.

A rename within a folder is atomic, so a reader, or a writer killed halfway, sees the old file whole or
the new one whole, never half of one. Every single-file write of the package that must not be seen half
done goes through `atomic_path` (or `write_text` / `write_bytes`, built on it).

The temporary file is `.<target name>.<unique>.tmp` in the target's folder (`is_temporary` recognises
one): hidden, never matching the target's own suffix, and one per writer, so two processes writing one
target do not write into each other's file. It is created empty with the umask's mode, as a plain
`open(path, "w")` would, so the renamed file has the mode the target had before this module existed.
A writer that fails leaves no temporary file; one that is killed does, until its owner prunes it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SUFFIX = ".tmp"


def is_temporary(path: Path) -> bool:
    """Whether `path` is named as `atomic_path` names its temporary files (one a killed writer left)."""
    return path.name.startswith(".") and path.name.endswith(SUFFIX)


@contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """A new empty file beside `target` (its folder created if need be) for the block to write;
    renamed over `target` when the block ends, deleted if it raises."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}{SUFFIX}")
    os.close(os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # O_EXCL: never another writer's file
    try:
        yield scratch
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)


def write_bytes(path: Path | str, data: bytes) -> Path:
    with atomic_path(path) as scratch:
        scratch.write_bytes(data)
    return Path(path)


def write_text(path: Path | str, text: str) -> Path:
    """`text` as UTF-8."""
    with atomic_path(path) as scratch:
        scratch.write_text(text, encoding="utf-8")
    return Path(path)
