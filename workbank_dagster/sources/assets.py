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


def _file_asset(source: Source) -> dg.AssetsDefinition:
    key = dg.AssetKey(["files", source.table])

    @dg.multi_observable_source_asset(
        name=f"files__{source.table}",
        specs=[
            dg.AssetSpec(
                key=key,
                group_name="sources",
                description=f"The file `{source.path}`; its data version is its SHA-256, so a changed file marks raw.{source.table} and everything below it stale.",
                metadata={"path": source.path, "origin": source.origin, "licence": source.licence},
                kinds={"file"},
                owners=["team:data-engineering"],
            )
        ],
    )
    def _observe(pipeline_settings: PipelineSettings):
        path = source_path(source.path, pipeline_settings.resolve())
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


file_assets = [_file_asset(source) for source in SOURCES]
raw_assets = [_raw_asset(source) for source in SOURCES]
