"""Row counts, column schemas (with the dbt descriptions) and column lineage for dbt models.

Read from the warehouse in one connection after `dbt build` has exited. Column lineage uses
dagster-dbt's own sqlglot-based builder (a private function of the pinned dagster-dbt 0.29.x) on
the compiled SQL that the build left in its target folder; if it cannot parse a model, that model
simply has no lineage (a warning), never a failed run.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb

from .project import dbt_project
from .translator import translator

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


def model_data_versions(
    con: duckdb.DuckDBPyConnection, manifest: Mapping, unique_ids: Iterable[str], sources: Mapping[tuple[str, str], str | None], dbt_vars: Mapping[str, Any]
) -> dict[str, str]:
    """unique_id → the data version of each model in `unique_ids`: what its relation holds.

    - A table (or an incremental model) is hashed: its row count and an order-independent sum of
      its rows' hashes (warehouse.table_hash), a few milliseconds each on the full data.
    - A view holds no rows of its own; hashing it would read its inputs again (the judgements and
      candidates views read every benchmark's partition files). Its version is a digest of its
      code version (translator.model_code_version) and its inputs' versions: the models it selects
      from, recursively, and the sources (`sources`, transform/assets.source_versions: a warehouse
      table's hash, or an external source's file digests).

    Dagster compares these with the versions that each asset below recorded as its inputs, so a
    model that holds what it held leaves them fresh, and one that moved makes them stale; without
    them Dagster derived a version from the models' code and their inputs', which did not move
    when one benchmark's partition changed (docs/pipeline.md)."""
    from .. import warehouse
    from .translator import default_dbt_vars, model_code_version

    source_ids = {uid: (props["schema"], props.get("identifier") or props["name"]) for uid, props in manifest["sources"].items()}
    found: dict[str, str] = {}

    def version(uid: str) -> str:
        if uid not in found:
            if uid in source_ids:
                found[uid] = f"source:{sources.get(source_ids[uid])}"
            else:
                props = manifest["nodes"][uid]
                if props.get("config", {}).get("materialized") in ("view", "ephemeral"):
                    parents = sorted(props.get("depends_on", {}).get("nodes", []))
                    digest = hashlib.sha256(model_code_version(manifest, props, dbt_vars, default_dbt_vars()).encode())
                    for parent in parents:
                        digest.update(f"\0{parent}={version(parent)}".encode())
                    found[uid] = f"view:{digest.hexdigest()[:32]}"
                else:
                    found[uid] = f"table:{warehouse.table_hash(con, *_relation(props))}"
        return found[uid]

    return {uid: version(uid) for uid in unique_ids if uid in manifest["nodes"]}
