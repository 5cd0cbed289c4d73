"""The shared data folder is read, never written: the test session checks that it leaves it as it found it.

The tests read ../shared/data in place (the reduced source folder links to its files), so a test that
opened one of those links for writing, or wrote a cache or a log beside them, would change the data
that every later session and CI reads. `snapshot` records each file's size and modification time at
the start of the session; `changes` names every file added, removed or modified since.
"""

from __future__ import annotations

from pathlib import Path

Snapshot = dict[str, tuple[int, int]]


def snapshot(folder: Path) -> Snapshot:
    """Each file under `folder` (links followed to their files), by relative path: (size, mtime in ns)."""
    out: Snapshot = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            stat = path.stat()
            out[path.relative_to(folder).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return out


def changes(before: Snapshot, folder: Path) -> list[str]:
    """What differs between `before` and the folder now: one line per file added, removed or modified."""
    after = snapshot(folder)
    lines = [f"added: {name}" for name in sorted(after.keys() - before.keys())]
    lines += [f"removed: {name}" for name in sorted(before.keys() - after.keys())]
    lines += [f"modified: {name}" for name in sorted(before.keys() & after.keys()) if before[name] != after[name]]
    return lines
