"""Code versions of the assets, derived from the definitions each one reaches, and the Dagster
decorators that declare them.

Dagster marks an asset stale when its `code_version` changes, so the version must change exactly
when the asset's computation does. Here it is derived, never typed by hand: a digest of every
project definition the asset's function reaches (code_reach.py: its syntax tree, without
docstrings or decorators) and of the values of the method settings those definitions read
(settings_reads.py), those not at their default. `reached` lists what an asset's version covers,
for tests and for a reader who asks why an asset went stale. Once derived, versions are kept per
text of the package (code_version_memo.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path

import dagster as dg

from . import code_reach, settings_reads
from .code_reach import Definition
from .code_version_memo import forget as forget_memos
from .code_version_memo import memo_for
from .settings import PipelineSettings, default, settings_at_load


def reached(*targets: Callable | type | Definition) -> list[str]:
    """Every project definition the targets' versions cover, as `module:name`, sorted, then the
    settings whose values they cover, as `setting:<field>`."""
    definitions = code_reach.closure(code_reach.root_of(t) for t in targets)
    return [f"{module}:{name}" for module, name in definitions] + [f"setting:{field}" for field in settings_reads.settings_read(*targets)]


def code_version(*targets: Callable | type | Definition, settings: PipelineSettings | None = None) -> str:
    """The targets' code version: a SHA-256 (first 16 hex digits) over each reached definition's
    module, name and canonical text, and over the value of each setting they read that is not at
    its default (`settings`, a PipelineSettings; by default `settings_at_load()`)."""
    roots = sorted({code_reach.root_of(t) for t in targets})
    settings = settings_at_load() if settings is None else settings
    # code_reach.PACKAGE_DIR is read here, not imported: a test points it at a copy of the source.
    memo, key = memo_for(_cache_dir(settings), code_reach.PACKAGE_DIR), json.dumps(roots)
    fields = memo.fields(key)
    if fields is not None and (found := memo.version(key, json.dumps(_settings_part(fields, settings)))) is not None:
        return found
    closure = code_reach.closure(roots)
    digest = hashlib.sha256()
    for module, name in closure:
        digest.update(f"{module}:{name}\0{code_reach.definition_of((module, name))[0]}\0".encode())
    fields = sorted({field for definition in closure for field in settings_reads.settings_read_by(definition)})
    parts = _settings_part(fields, settings)
    for part in parts:
        digest.update(f"setting:{part}\0".encode())
    version = digest.hexdigest()[:16]
    memo.remember(key, fields, json.dumps(parts), version)
    return version


def _cache_dir(settings: PipelineSettings) -> Path | None:
    """Where the versions derived for this text of the package are kept (code_version_memo.py)."""
    try:
        return settings.resolve().cache_dir
    except Exception:  # settings that do not resolve are reported where they are used, not here
        return None


def _settings_part(fields: Iterable[str], settings: PipelineSettings | None) -> list[str]:
    """`field=value` (JSON) of each field whose value is not its default."""
    settings = settings_at_load() if settings is None else settings
    parts, values = [], settings.values()
    for field in sorted(fields):
        value = values[field]
        if value != default(field):
            parts.append(f"{field}={json.dumps(value, sort_keys=True, default=str)}")
    return parts


def clear_cache() -> None:
    """Forget the parsed modules, what their definitions read and the memos (a test that edits a
    source file asks again)."""
    code_reach.clear_cache()
    settings_reads.clear_cache()
    forget_memos()


# The metadata entry where an asset whose version covers a stamp (`versioned_multi_asset`) shows it.
STAMP_METADATA = "code_stamp"


def stamped_version(version: str, stamp: object) -> str:
    """A code version that also covers `stamp`, a JSON-able value."""
    return hashlib.sha256(f"{version}\0{json.dumps(stamp, sort_keys=True)}".encode()).hexdigest()[:16]


def _stamped(version: str, stamp: object, metadata) -> tuple[str, dict]:
    """`version` and `metadata` as an asset declares them: with `stamp` (when given) covered by the
    version and shown in the metadata (`code_stamp`)."""
    if stamp is None:
        return version, dict(metadata or {})
    return stamped_version(version, stamp), {**(metadata or {}), STAMP_METADATA: dg.MetadataValue.json(stamp)}


def versioned_asset(*, also: Iterable[Callable] = (), stamp: object = None, **kwargs) -> Callable[[Callable], dg.AssetsDefinition]:
    """`dg.asset(**kwargs)`, its `code_version` derived from the function it decorates and from
    `also`: what it calls through a value it closes over (a factory's argument, such as a source's
    reader), which its source cannot name; and, when given, from `stamp` (as `versioned_multi_asset`)."""

    def decorate(fn: Callable) -> dg.AssetsDefinition:
        version, metadata = _stamped(code_version(fn, *also), stamp, kwargs.get("metadata"))
        return dg.asset(**{**kwargs, "code_version": version, "metadata": metadata or None})(fn)

    return decorate


def versioned_multi_asset(*, specs: Iterable[dg.AssetSpec], stamp: object = None, **kwargs) -> Callable[[Callable], dg.AssetsDefinition]:
    """`dg.multi_asset(specs=specs, **kwargs)`, every spec's `code_version` the one derived from the
    function it decorates (one function computes all of them), and, when given, from `stamp`: a
    JSON-able value the step writes into what it makes as a constant of its code (the report's
    version stamp: report/headline.code_stamp), shown in the specs' metadata (`code_stamp`)."""

    def decorate(fn: Callable) -> dg.AssetsDefinition:
        version = code_version(fn)
        stamped = [(spec, *_stamped(version, stamp, spec.metadata)) for spec in specs]
        return dg.multi_asset(specs=[spec.replace_attributes(code_version=v, metadata=m) for spec, v, m in stamped], **kwargs)(fn)

    return decorate


def step_code_version(context: dg.AssetExecutionContext) -> str:
    """The code version the running step's assets declare (one step, one version)."""
    (version,) = {spec.code_version for spec in context.assets_def.specs}
    assert version is not None, f"{context.assets_def.node_def.name} declares no code_version"
    return version
