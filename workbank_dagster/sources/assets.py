"""Thin Dagster assets over the parsers: observe each file's hash, parse, validate, write `raw.*`
and log the load (or, for a file whose hash and parser are those of its last logged load, keep the
rows it already wrote: `load_memo`)."""


from pathlib import Path

import dagster as dg
import pandas as pd

from .. import warehouse
from ..code_version import versioned_asset
from ..common import file_sha256, table_metadata, warehouse_step
from ..fingerprint import INPUTS_METADATA, RECOMPUTED_METADATA
from ..resources import WarehouseResource
from ..settings import PipelineSettings, Settings
from . import load_memo
from .fetch import UPSTREAM_BY_TARGET, Resolver
from .registry import SOURCES, Source

RAW_SCHEMA = "raw"


def source_path(relative: str, settings: Settings) -> Path:
    """Where a reference file is read: the source folder's copy, as given, when one is set; else the
    file with its pinned SHA-256 (fetch.py: the download cache, the local copy, its upstream URL)."""
    if settings.source_dir is not None:
        return settings.source_dir / relative
    return Resolver.of(settings).path(UPSTREAM_BY_TARGET[relative])


def _observe_files(sources: tuple[Source, ...]) -> dg.AssetsDefinition:
    """One observation of every reference file, each its own asset `files/<table>`: a step of
    `make run`'s job (automation.all_assets_job) ahead of the loads, so the raw tables are built
    against the versions Dagster has seen, and a changed file marks raw.<table> stale in the UI. One
    step, not one per file: twenty hashes of a few MB cost less than twenty steps."""

    @dg.multi_observable_source_asset(
        name="files__observed",
        specs=[
            dg.AssetSpec(
                key=dg.AssetKey(["files", source.table]),
                group_name="sources",
                description=f"The file `{source.path}`; its data version is its SHA-256, so a changed file marks raw.{source.table} and everything below it stale.",
                metadata={"path": source.path, "origin": source.origin, "licence": source.licence},
                kinds={"file"},
                owners=["team:data-engineering"],
            )
            for source in sources
        ],
        can_subset=True,
    )
    def _observe(context: dg.AssetExecutionContext, pipeline_settings: PipelineSettings):
        settings = pipeline_settings.resolve()
        for source in sources:
            key = dg.AssetKey(["files", source.table])
            if key not in context.selected_asset_keys:
                continue
            path = source_path(source.path, settings)
            digest = file_sha256(path) if path.is_file() else "missing"
            yield dg.ObserveResult(asset_key=key, data_version=dg.DataVersion(digest), metadata={"sha256": digest, "path": str(path)})

    return _observe


def _raw_asset(source: Source) -> dg.AssetsDefinition:
    @versioned_asset(
        key=[RAW_SCHEMA, source.table],
        also=[source.read],
        deps=[dg.AssetKey(["files", source.table])],
        **warehouse_step("sources", "team:data-engineering"),
        description=source.description,
        metadata={"source_file": source.path, "origin": source.origin, "licence": source.licence},
    )
    def _load(context: dg.AssetExecutionContext, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings) -> dg.MaterializeResult:
        settings = pipeline_settings.resolve()
        path = source_path(source.path, settings)
        digest = file_sha256(path)  # before reading: a file changed meanwhile is parsed again next time
        recorded = load_memo.recorded_loads(settings.partition_files, source.table).get(load_memo.WHOLE_TABLE)
        frame, parsed, record = load_memo.reuse_or_parse(
            digest, recorded,
            read_back=lambda: warehouse_db.query_if_exists(RAW_SCHEMA, source.table, "SELECT * FROM {table}"),
            parse=lambda: source.read(path),
            write=lambda frame: _replace(warehouse_db, source.table, frame),
            source_file=source.path, source_bytes=path.stat().st_size,
        )
        if parsed:
            load_memo.append_loads(settings.partition_files, source.table, {load_memo.WHOLE_TABLE: record}, context.run_id)
        context.log.info(f"raw.{source.table}: {len(frame)} rows from {path}" + ("" if parsed else " (file unchanged: kept, not parsed again)"))
        return dg.MaterializeResult(
            metadata={
                **table_metadata(frame, source),
                "sha256": digest,
                RECOMPUTED_METADATA: parsed,
                INPUTS_METADATA: record[INPUTS_METADATA],
            },
            data_version=dg.DataVersion(digest),
        )

    return _load


def _replace(warehouse_db: WarehouseResource, table: str, frame: pd.DataFrame) -> None:
    with warehouse_db.connect() as con:
        warehouse.replace_table(con, RAW_SCHEMA, table, frame)


file_assets = [_observe_files(SOURCES)]
raw_assets = [_raw_asset(source) for source in SOURCES]
