"""Each Python asset's derived code version (workbank_dagster/code_version.py), read from the
checkout's source or from a copy's, with the settings at load or given ones: what Dagster would
call stale for its code or a setting after an edit."""

from __future__ import annotations

from pathlib import Path

DBT_SCHEMAS = ("staging", "intermediate", "marts")


def asset_code_versions(defs, package_dir: Path | None = None, settings=None) -> dict[str, str]:
    """Asset (user string) -> the code version its function (and a factory's reader) has in the
    package at `package_dir` (default: the checkout), with the settings `settings` (a
    PipelineSettings; default: this process's, `settings_at_load()`, as the definitions loaded).
    dbt's models are versioned from their SQL, macros and vars (transform/translator.py,
    `model_code_version`; tests/transform/test_model_code_versions.py) and the file observations
    have no code; both are left out."""
    from workbank_dagster import code_reach
    from workbank_dagster import code_version as cv

    original = code_reach.PACKAGE_DIR
    code_reach.PACKAGE_DIR = package_dir or original
    cv.clear_cache()
    try:
        return {name: cv.code_version(*targets, settings=settings) for name, targets in asset_targets(defs).items()}
    finally:
        code_reach.PACKAGE_DIR = original
        cv.clear_cache()


def asset_targets(defs) -> dict[str, tuple]:
    """Asset (user string) -> what its version is derived from: its function, and a factory's
    reader (`versioned_asset(also=...)`). dbt's models and the file observations are left out."""
    from workbank_dagster.sources.registry import SOURCES

    readers = {("raw", source.table): source.read for source in SOURCES}  # a factory's argument: `also`
    graph = defs.resolve_asset_graph()
    targets = {}
    for key in graph.get_all_asset_keys():
        if not graph.get(key).is_materializable or key.path[0] in DBT_SCHEMAS:
            continue
        fn = defs.resolve_assets_def(key).op.compute_fn.decorated_fn  # a test may look inside; the package does not
        also = [readers[tuple(key.path)]] if tuple(key.path) in readers else []
        targets[key.to_user_string()] = (fn, *also)
    return targets
