"""Row counts, column schemas (with the dbt descriptions) and column lineage for dbt models.

Read from the warehouse in one connection after `dbt build` has exited. Column lineage uses
dagster-dbt's own sqlglot-based builder (a private function of the pinned dagster-dbt 0.29.x) on
the compiled SQL that the build left in its target folder; if it cannot parse a model, that model
simply has no lineage (a warning), never a failed run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from .project import dbt_project, translator

log = logging.getLogger(__name__)


def _columns(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], list[tuple[str, str]]]:
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    rows = con.execute(
        "select table_schema, table_name, column_name, data_type from information_schema.columns "
        "where table_catalog = current_database() order by table_schema, table_name, ordinal_position"
    ).fetchall()
    for schema, table, column, dtype in rows:
        out.setdefault((schema, table), []).append((column, dtype))
    return out


def _relation(props: Mapping[str, Any]) -> tuple[str, str]:
    return props["schema"], props.get("alias") or props.get("identifier") or props["name"]


def _lineage(props, parents_of, manifest, columns, target_path: Path | None) -> dict:
    try:
        from dagster_dbt.core.dbt_cli_event import EventHistoryMetadata, _build_column_lineage_metadata

        parents = {}
        for parent_id in parents_of:
            parent = manifest["nodes"].get(parent_id) or manifest["sources"].get(parent_id)
            if parent and parent.get("relation_name") and _relation(parent) in columns:
                parents[parent["relation_name"]] = {c: {"data_type": t} for c, t in columns[_relation(parent)]}
        own = {c: {"data_type": t} for c, t in columns.get(_relation(props), [])}
        return _build_column_lineage_metadata(
            event_history_metadata=EventHistoryMetadata(columns=own, parents=parents),
            dbt_resource_props=dict(props),
            manifest=manifest,
            dagster_dbt_translator=translator,
            target_path=target_path,
            project=dbt_project,
        )
    except Exception as exc:  # lineage is a convenience; a model sqlglot cannot parse just lacks it
        log.warning("no column lineage for %s: %s", props.get("unique_id"), exc)
        return {}


def model_metadata(con: duckdb.DuckDBPyConnection, manifest: Mapping, target_path: Path | None, events: Iterable) -> dict[str, dict]:
    """unique_id → metadata for every model materialized in `events`."""
    columns = _columns(con)
    out: dict[str, dict] = {}
    for event in events:
        unique_id = getattr(getattr(event, "metadata", {}).get("unique_id"), "text", None)
        props = manifest["nodes"].get(unique_id) if unique_id else None
        if props is None or props.get("resource_type") != "model" or unique_id in out:
            continue
        relation = _relation(props)
        if relation not in columns:
            continue
        described = props.get("columns", {})
        metadata: dict[str, Any] = {
            "dagster/row_count": dg.MetadataValue.int(con.execute(f'select count(*) from "{relation[0]}"."{relation[1]}"').fetchone()[0]),
            "dagster/column_schema": dg.TableSchema(
                columns=[dg.TableColumn(c, t, description=(described.get(c) or {}).get("description") or None) for c, t in columns[relation]]
            ),
        }
        metadata.update(_lineage(props, manifest.get("parent_map", {}).get(unique_id, []), manifest, columns, target_path))
        out[unique_id] = metadata
    return out
