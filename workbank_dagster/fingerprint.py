"""One way to know what is stale: the fingerprint of a cached step, kept in its materialization.

Seven steps skip their work when nothing they depend on changed: the source loads, the occupation
prior, the embedded labels, the dbt models, the analysis steps, the data dictionary's dbt docs and
the report page. Each records its key in one place, the metadata of its own Dagster
materialization (`inputs_sha256`; per partition, a JSON object keyed by partition), and reads it
back from there (`last_fingerprint`, `recorded_per_partition`) before it decides. Each used to hash
its own list of files, and keep it in its own store (a warehouse table, a key inside a `.npz`,
sidecar files), and lists go stale (the dictionary's left out `analysis/columns.py`, so an edited
column description never reached DATA_DICTIONARY.md). Here every one of them hashes the same things:

- **code**: the step's module and every project module it imports, found by reading the import
  statements (transitively, within this package), so a new import is covered the day it is written;
- **inputs**: its declared input files, frames and settings, passed in by the step.

The embedding and judgement stores are not staleness checks: they are content-addressed (a text's
vector, a prompt's judgement), and stay where they are.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import dagster as dg
import pandas as pd

PACKAGE = "workbank_dagster"
PACKAGE_DIR = Path(__file__).resolve().parent
# The metadata entry where a cached step records its key.
INPUTS_METADATA = "inputs_sha256"
# ... and whether it did its work this time (true) or kept what its key names (false); a
# partitioned step records the partitions it worked, as a list.
RECOMPUTED_METADATA = "recomputed"


def module_path(module: str) -> Path | None:
    """The file of a project module (`workbank_dagster.labeling.titles`), or None outside the project."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    parts = module.split(".")[1:]
    if not parts:
        return PACKAGE_DIR / "__init__.py"
    relative = Path(*parts)
    for candidate in (PACKAGE_DIR / relative.with_suffix(".py"), PACKAGE_DIR / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(path: Path, module: str) -> set[str]:
    """Project modules that `module` (at `path`) imports, absolute or relative."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            found.add(stem)
            found.update(f"{stem}.{alias.name}" for alias in node.names)  # `from . import warehouse`
    return {name for name in found if module_path(name) is not None}


@functools.cache
def project_modules(module: str) -> tuple[Path, ...]:
    """The files of `module` and of every project module it imports, directly or not, sorted."""
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        path = module_path(name)
        if path is None or name in seen:
            continue
        seen[name] = path
        todo.extend(_imports(path, name) - set(seen))
    return tuple(sorted(set(seen.values())))


def code_sha256(*modules: str) -> str:
    """SHA-256 over the files of these modules and everything they import (see `project_modules`)."""
    digest = hashlib.sha256()
    for path in sorted({p for m in modules for p in project_modules(m)}):
        digest.update(str(path.relative_to(PACKAGE_DIR)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def fingerprint(*, modules: Iterable[str], inputs: Iterable[object] = ()) -> str:
    """The key of a cached step: its code (`modules` and their imports) and its inputs.

    An input may be a frame (its columns and content), a file path (its bytes), or any JSON-able
    value (settings, versions, row counts)."""
    digest = hashlib.sha256(code_sha256(*modules).encode())
    for part in inputs:
        if isinstance(part, pd.DataFrame):
            digest.update(repr(list(part.columns)).encode())
            digest.update(pd.util.hash_pandas_object(part, index=False).to_numpy().tobytes())
        elif isinstance(part, Path):
            digest.update(part.read_bytes())
        else:
            digest.update(json.dumps(part, sort_keys=True, default=str).encode())
        digest.update(b"\x1f")
    return digest.hexdigest()


def last_fingerprint(instance, asset_key) -> tuple[str | None, dict]:
    """The fingerprint an asset's last materialization recorded (metadata `inputs_sha256`), and that
    materialization's metadata: (None, {}) when it has none. A step that finds its current
    fingerprint there, and its tables in place, keeps them (analysis steps, dbt models)."""
    event = instance.get_latest_materialization_event(asset_key)
    metadata = dict(event.asset_materialization.metadata) if event and event.asset_materialization else {}
    return getattr(metadata.get(INPUTS_METADATA), "value", None), metadata


def recorded_per_partition(instance, asset_key, name: str, partitions: Iterable[str]) -> dict[str, object]:
    """Per partition, its entry in the JSON metadata `name` of that partition's last materialization.

    A partitioned step that runs several partitions at once records one JSON object keyed by
    partition (the source loads, the embedded labels' keys); a partition whose last materialization
    has no entry of its own is left out, and so is worked again."""
    wanted = set(partitions)
    latest: dict[str, object] = {}  # partition -> its last materialization
    cursor = None
    # Newest first, for all the partitions at once: a run that materialized them together (a
    # single-run backfill) is one page, where one query per partition took ~10 ms each.
    while wanted - set(latest):
        page = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=sorted(wanted)), limit=max(len(wanted), 1), cursor=cursor
        )
        for record in page.records:
            materialization = record.asset_materialization
            if materialization is not None and materialization.partition in wanted:
                latest.setdefault(materialization.partition, materialization)
        if not page.has_more:
            break
        cursor = page.cursor
    out: dict[str, object] = {}
    for partition, materialization in latest.items():
        value = getattr(materialization.metadata.get(name), "value", None)
        if isinstance(value, dict) and partition in value:
            out[partition] = value[partition]
    return out
