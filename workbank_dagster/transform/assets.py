"""Every dbt model an asset, every dbt test an asset check, built by one `dbt build` per run."""


from collections.abc import Iterator
from pathlib import Path

import dagster as dg
from dagster_dbt import DbtCliResource, dbt_assets

from .. import warehouse
from ..resources import WarehouseResource
from ..settings import PipelineSettings
from .metadata import model_metadata
from .project import dbt_build_args, dbt_project, ensure_manifest, point_dbt_at, prune_build_dirs, translator

ensure_manifest()


class UnknownActiveLabeler(dg.Failure):
    pass


def check_active_labeler(warehouse_db: WarehouseResource, labeler: str) -> None:
    """Refuse to build the marts from a labeler that has judged nothing.

    The marts keep the active labeler's labels (`var('active_labeler')`): a misspelt labeler, or one
    whose labeling job never ran (the LLM judge), gave empty marts and green checks. A labeler with
    judgement records and no labels (it abstained on everything, or found nothing) is not an error.
    """
    with warehouse_db.connect() as con:
        if not warehouse.table_exists(con, "raw", "benchmark_prompts") or not con.execute("select count(*) from raw.benchmark_prompts").fetchone()[0]:
            return  # nothing to judge yet
        judged: dict[str, int] = {}
        for judge in ("embedded", "llm"):
            if warehouse.table_exists(con, "labeling", f"{judge}_judgements"):
                for name, count in con.execute(f"select labeler, count(*) from labeling.{judge}_judgements group by 1").fetchall():
                    judged[name] = judged.get(name, 0) + count
    if not judged.get(labeler):
        found = ", ".join(f"{name} ({count:,} prompts)" for name, count in sorted(judged.items())) or "none"
        raise UnknownActiveLabeler(
            description=f"the active labeler {labeler!r} (WORKBANK_ACTIVE_LABELER) has no judgement records in labeling.*_judgements, "
            f"so the marts would be empty. Labelers found: {found}. Run its labeling first (the LLM judge: job llm_labeling) or "
            "choose one of those."
        )


@dbt_assets(manifest=dbt_project.manifest_path, project=dbt_project, dagster_dbt_translator=translator, pool="warehouse", name="dbt_models")
def dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, warehouse_db: WarehouseResource, pipeline_settings: PipelineSettings):
    settings = pipeline_settings.resolve()
    check_active_labeler(warehouse_db, settings.active_labeler)
    point_dbt_at(warehouse_db.path)
    invocation = dbt.cli(dbt_build_args(settings), context=context)
    try:
        yield from with_warehouse_metadata(invocation, warehouse_db)
    finally:
        for path in prune_build_dirs(Path(invocation.target_path)):
            context.log.debug(f"removed the old dbt target folder {path}")


def with_warehouse_metadata(invocation, warehouse_db: WarehouseResource) -> Iterator:
    """dbt's events, each model's materialization given row count, typed and described columns and
    column lineage, read from the warehouse once dbt has exited.

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
    for event in events:
        unique_id = getattr(event, "metadata", {}).get("unique_id")
        key = getattr(unique_id, "text", None)
        if isinstance(event, (dg.Output, dg.AssetMaterialization)) and key in extra:
            event = event.with_metadata({**event.metadata, **extra[key]})
        yield event
    if failure is not None:
        raise failure
