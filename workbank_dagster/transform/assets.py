"""Every dbt model an asset, every dbt test an asset check, built by one `dbt build` per run, or
kept when nothing dbt reads has changed since the models were last built.

The models over per-benchmark tables are incremental by benchmark (dbt_project/macros/by_benchmark.sql):
a build rewrites the benchmarks whose files changed. What they cannot see is a change of the project
itself (a model, macro, test or var), so a build whose project differs from the one any selected
model was last built by is a full refresh (`dbt build --full-refresh`); so is a run asked for one
(config `full_refresh`, `cli run --full-refresh`)."""


import graphlib
import json
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets
from pydantic import Field

from .. import warehouse
from ..code_version import code_version
from ..fingerprint import INPUTS_METADATA, RECOMPUTED_METADATA, fingerprint, last_fingerprint, last_materialization
from ..partition_files import PartitionFiles
from ..resources import WarehouseResource
from ..settings import PipelineSettings, Settings
from ..staleness import DATA_VERSION_TAG
from .metadata import model_data_versions, model_metadata
from .project import (
    build_dir_for,
    dbt_build_args,
    dbt_for,
    dbt_project,
    frozen_files_name,
    mark_build_dir,
    prepared_manifest,
    project_inputs,
    prune_build_dirs,
)
from .translator import translator

# Read, not parsed: the CLI, `dagster dev` and the image build prepare it (project.prepared_manifest).
prepared_manifest()


class UnknownActiveLabeler(dg.Failure):
    pass


def check_active_labeler(files: PartitionFiles, labeler: str) -> None:
    """Refuse to build the marts from a labeler that has judged nothing.

    The marts keep the active labeler's labels (`var('active_labeler')`): a misspelt labeler, or one
    whose labeling job never ran (the LLM judge), gave empty marts and green checks. A labeler with
    judgement records and no labels (it abstained on everything, or found nothing) is not an error.
    """
    if not files.partitions("benchmark_prompts"):
        return  # nothing to judge yet
    judged: dict[str, int] = {}
    for judge in ("embedded", "llm"):
        found = files.query(f"{judge}_judgements", "select labeler, count(*) as n from {table} group by 1")
        for name, count in ([] if found is None else zip(found["labeler"], found["n"])):
            judged[name] = judged.get(name, 0) + int(count)
    if not judged.get(labeler):
        found = ", ".join(f"{name} ({count:,} prompts)" for name, count in sorted(judged.items())) or "none"
        raise UnknownActiveLabeler(
            description=f"the active labeler {labeler!r} (WORKBANK_ACTIVE_LABELER) has no judgement records in labeling.*_judgements, "
            f"so the marts would be empty. Labelers found: {found}. Run its labeling first (the LLM judge: job llm_labeling) or "
            "choose one of those."
        )


# Where each model's materialization records the dbt project it was built by (`dbt_project_key`).
PROJECT_METADATA = "dbt_project_sha256"


class DbtBuildConfig(dg.Config):
    full_refresh: bool = Field(
        default=False,
        description="Rebuild every model from all the partition files (`dbt build --full-refresh`) instead of the benchmarks whose files changed.",
    )


@dbt_assets(manifest=dbt_project.manifest_path, project=dbt_project, dagster_dbt_translator=translator, pool="warehouse", name="dbt_models")
def dbt_models(
    context: dg.AssetExecutionContext, config: DbtBuildConfig, dbt: DbtCliResource, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings
):
    settings = pipeline_settings.resolve()
    check_active_labeler(settings.partition_files, settings.active_labeler)
    manifest = json.loads(dbt_project.manifest_path.read_text())
    # dbt reads the partition files as they are now, whatever a partition run writes meanwhile.
    with settings.partition_files.frozen(external_tables(manifest), frozen_files_name(warehouse_db.path)) as files:
        with warehouse_db.connect() as con:
            for schema, name, kind in drop_orphaned_relations(con, manifest):
                context.log.info(f"dropped {kind.lower()} {schema}.{name}: no node of the dbt project builds it (a renamed or removed model's)")
            sources = source_versions(con, manifest, files)
        key = dbt_inputs_key(sources, settings)
        project = dbt_project_key(settings)
        kept = None if config.full_refresh else models_built_from(context, warehouse_db, key)
        if kept is not None:
            context.log.info("every selected model was last built, with its tests passing, from what dbt reads now: kept, dbt not run")
            for asset_key, (metadata, version) in kept.items():
                output = context.assets_def.get_output_name_for_asset_key(asset_key)
                yield dg.Output(None, output_name=output, metadata={**metadata, INPUTS_METADATA: key, RECOMPUTED_METADATA: False}, data_version=version)
            return
        recorded = {asset_key: last_fingerprint(context.instance, asset_key)[1].get(PROJECT_METADATA) for asset_key in context.selected_asset_keys}
        full_refresh = config.full_refresh or needs_full_refresh([getattr(value, "value", None) for value in recorded.values()], project)
        if full_refresh:
            context.log.info("full refresh: every model rebuilt from all the partition files" + ("" if config.full_refresh else
                             " (a selected model was last built by another dbt project, its models, macros, tests or vars, or never)"))
        run_dbt = dbt_for(dbt, settings, warehouse_db.path, files.root)
        build_dir = mark_build_dir(build_dir_for(run_dbt.profiles_dir), run_dbt.profiles_dir)
        invocation = run_dbt.cli(dbt_build_args(settings, full_refresh=full_refresh), context=context, target_path=build_dir)
        try:
            yield from with_warehouse_metadata(invocation, warehouse_db, key, project, sources, settings.dbt_vars)
        finally:
            for path in prune_build_dirs(Path(invocation.target_path)):
                context.log.debug(f"removed the old dbt target folder {path}")


def drop_orphaned_relations(con, manifest: dict) -> list[tuple[str, str, str]]:
    """Drop the tables and views in the schemas the dbt project builds into (staging, intermediate,
    marts) that none of its nodes builds and none of its sources names, and return them (schema,
    name, type). A renamed or removed model leaves its old relation behind: dbt never drops it, and
    it would go on answering queries with what the project no longer makes. The other schemas (raw,
    labeling, analysis) are the pipeline's Python assets' and are never touched."""
    built = {
        (node["schema"], node.get("alias") or node["name"])
        for node in manifest["nodes"].values()
        if node["resource_type"] in ("model", "seed", "snapshot") and node.get("config", {}).get("materialized") != "ephemeral"
    }
    named = {(node["schema"], node.get("identifier") or node["name"]) for node in manifest["sources"].values()}
    schemas = {schema for schema, _ in built}
    rows = con.execute("select table_schema, table_name, table_type from information_schema.tables where table_catalog = current_database()").fetchall()
    orphans = sorted((schema, name, kind) for schema, name, kind in rows if schema in schemas and (schema, name) not in built | named)
    for schema, name, kind in orphans:
        con.execute(f"drop {'view' if kind == 'VIEW' else 'table'} {warehouse.quote(schema)}.{warehouse.quote(name)}")
    return orphans


def _source_tables(manifest: dict) -> list[tuple[str, str, bool]]:
    """(schema, table, read from partition files: `external_location`) of every source the manifest names, sorted."""
    return sorted(
        {(node["schema"], node.get("identifier") or node["name"], "external_location" in (node.get("meta") or {})) for node in manifest["sources"].values()}
    )


def external_tables(manifest: dict) -> list[str]:
    """The tables the manifest's sources read from partition files, sorted."""
    return sorted({table for _, table, external in _source_tables(manifest) if external})


def source_versions(con, manifest: dict, files: PartitionFiles) -> dict[tuple[str, str], str | None]:
    """(schema, table) → the content of every source the manifest names: a warehouse table's rows
    (order-independent hash), or an external source's files in `files` (partition_files.py: their
    names and SHA-256s); None for a warehouse table not there yet."""
    sources = _source_tables(manifest)
    file_hashes = files.content_sha256s(table for _, table, external in sources if external)  # one read and write of the kept hashes
    return {
        (schema, table): file_hashes[table] if external else warehouse.table_hash(con, schema, table) if warehouse.table_exists(con, schema, table) else None
        for schema, table, external in sources
    }


def dbt_inputs_key(sources: dict[tuple[str, str], str | None], settings: Settings) -> str:
    """What the models are built from: the dbt project's files, the pipeline's --vars, the dbt-core
    version, the code version of this step's Python (`dbt_models` and what it reaches), and the
    content of every source the manifest names (`source_versions`).

    A new or removed benchmark, a relabeled prompt or a reloaded source changes a source; an edited
    model, macro or test changes a file. Either makes the next run build."""
    tables = [[schema, table, version] for (schema, table), version in sorted(sources.items())]
    return fingerprint(code=code_version((__name__, "dbt_models")), inputs=[*project_inputs(), settings.dbt_vars, tables])


def dbt_project_key(settings: Settings) -> str:
    """What the models are built by, not from: the dbt project's files (models, macros, tests, its
    settings), the pipeline's --vars and the dbt-core version. The incremental models see which
    benchmarks' files changed; another project means every model is built again. Python code is
    left out: it decides when dbt runs, not what a model holds."""
    return fingerprint(code="", inputs=[*project_inputs(), settings.dbt_vars])


def needs_full_refresh(recorded: list[str | None], project: str) -> bool:
    """A build must be a full refresh when a selected model's last build was by another project than
    `project` (`dbt_project_key`), or recorded none (never built here, or built by code before the
    models were incremental)."""
    return any(key != project for key in recorded)


def models_built_from(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, key: str) -> dict[dg.AssetKey, tuple[dict, dg.DataVersion]] | None:
    """When every selected model's last materialization recorded `key` (a build whose tests all
    passed, see `with_warehouse_metadata`) and a data version, and its relation is still in the
    warehouse: each model's last metadata (row count, columns, lineage) and data version, to report
    again. Otherwise None: build."""
    recorded: dict[dg.AssetKey, tuple[dict, dg.DataVersion]] = {}
    selected = set(context.selected_asset_keys)
    upstream = {model: sorted(set(context.assets_def.asset_deps.get(model, ())) & selected) for model in sorted(selected)}
    for asset_key in graphlib.TopologicalSorter(upstream).static_order():  # a multi-asset reports in dependency order
        materialization = last_materialization(context.instance, asset_key)
        metadata = dict(materialization.metadata) if materialization else {}
        version = (materialization.tags or {}).get(DATA_VERSION_TAG) if materialization else None
        if getattr(metadata.get(INPUTS_METADATA), "value", None) != key or version is None:
            return None
        recorded[asset_key] = (metadata, dg.DataVersion(version))
    with warehouse_db.connect() as con:
        return recorded if all(warehouse.table_exists(con, *asset_key.path) for asset_key in recorded) else None


def with_warehouse_metadata(invocation, warehouse_db: WarehouseResource, key: str, project: str, sources: dict, dbt_vars: dict) -> Iterator:
    """dbt's events, each model's materialization given row count, typed and described columns,
    column lineage and its data version (`model_data_versions`: what its relation holds), read from
    the warehouse once dbt has exited, `project` (the dbt project each built model was built by:
    `dbt_project_key`), and, when the whole build passed, `key` (what it was built from: a later
    run with the same key keeps the models, and reports the versions this build recorded).

    dagster-dbt's own `fetch_row_counts()` / `fetch_column_metadata()` query the warehouse while
    dbt is still running; a DuckDB file allows one process at a time, so here the events wait for
    dbt to finish and one connection reads what they need.
    """
    events, failure = [], None
    try:
        for event in invocation.stream():
            events.append(event)
    except Exception as exc:  # dbt failed: still report what it built, then fail the step
        failure = exc
    with warehouse_db.connect() as con:
        extra = model_metadata(con, invocation.manifest, invocation.target_path, events)
        versions = model_data_versions(con, invocation.manifest, extra, sources, dbt_vars)
    # A failed build records no key: the next run builds again and runs the tests again.
    built = {PROJECT_METADATA: project, RECOMPUTED_METADATA: True, **({INPUTS_METADATA: key} if failure is None else {})}
    for event in events:
        unique_id = getattr(event, "metadata", {}).get("unique_id")
        name = getattr(unique_id, "text", None)
        if isinstance(event, dg.Output):
            event = dg.Output(event.value, output_name=event.output_name, metadata={**event.metadata, **extra.get(name, {}), **built}, tags=event.tags,
                              data_version=dg.DataVersion(versions[name]) if name in versions else None)
        elif isinstance(event, dg.AssetMaterialization):
            event = event.with_metadata({**event.metadata, **extra.get(name, {}), **built})
        yield event
    if failure is not None:
        raise failure
