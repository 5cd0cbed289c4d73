"""The derived code versions (code_version.py) remembered from process to process, for one text of
the package.

Deriving them parses every module of the package and walks the syntax tree of every definition
an asset reaches: about a third of loading the definitions, paid by every process that loads them
(a run, the webserver, the daemon, each test's subprocess). A version is a function of the
package's source files and of the settings the definitions read, so it is kept in a file named by
a digest of every source file's path and bytes: an edit of any file names another file, and
nothing already written is ever read for another text. What is kept per set of roots: the settings
their definitions read, and the version for each combination of those settings' values.

The file lives in the cache folder (`cache_dir/code_versions/`). It is written once per process
that derived something new, at exit, atomically; a process that cannot read or write it derives
as before.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
from pathlib import Path

from .atomic import write_text

KEEP = 20  # memo files kept in the folder, newest first


@functools.cache
def package_digest(package_dir: Path) -> str:
    """SHA-256 of every `.py` file under `package_dir`, its path and its bytes."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class Memo:
    """Versions by roots (`key`): the settings the roots read, and a version per settings part."""

    def __init__(self, path: Path | None):
        self.path = path
        self.entries: dict[str, dict] = {}
        self.dirty = False
        if path is not None:
            try:
                self.entries = json.loads(path.read_text())
            except (OSError, ValueError):
                self.entries = {}

    def fields(self, key: str) -> list[str] | None:
        entry = self.entries.get(key)
        return None if entry is None else entry["fields"]

    def version(self, key: str, part: str) -> str | None:
        entry = self.entries.get(key)
        return None if entry is None else entry["versions"].get(part)

    def remember(self, key: str, fields: list[str], part: str, version: str) -> None:
        entry = self.entries.setdefault(key, {"fields": fields, "versions": {}})
        entry["versions"][part] = version
        self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        try:
            write_text(self.path, json.dumps(self.entries, sort_keys=True))
            self.dirty = False
            # One file per text of the package ever loaded (each commit, each test's edit): the newest are kept.
            for old in sorted(self.path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]:
                old.unlink(missing_ok=True)
        except OSError:
            pass


_memos: dict[str, Memo] = {}


def memo_for(cache_dir: Path | None, package_dir: Path) -> Memo:
    """The memo of this text of the package (the source under `package_dir`) in `cache_dir` (None:
    kept in this process only)."""
    digest = package_digest(package_dir)
    path = None if cache_dir is None else Path(cache_dir) / "code_versions" / f"{digest[:24]}.json"
    name = f"{digest}:{path}"
    if name not in _memos:
        _memos[name] = Memo(path)
    return _memos[name]


def save_all() -> None:
    for memo in _memos.values():
        memo.save()


atexit.register(save_all)


def forget() -> None:
    """Forget the memos and the package's digest (a test that edits a source file asks again)."""
    save_all()
    _memos.clear()
    package_digest.cache_clear()
