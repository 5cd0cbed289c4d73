"""How Dagster sees each dbt node: models keyed [schema, name], grouped and owned, and versioned by
what they build and how they are checked (`model_code_version`: their SQL, configuration and
declared column types, their tests, the macros they call and the vars those read)."""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtProject

from ..settings import settings_at_load

# A `var('name')` (or "name") in a model's or macro's Jinja.
VAR_CALL = re.compile(r"""\bvar\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]""")


def macro_closure(manifest: Mapping[str, Any], macro_ids) -> list[str]:
    """The macros `macro_ids` name and every macro they call, transitively, sorted."""
    seen: set[str] = set()
    todo = list(macro_ids)
    while todo:
        macro_id = todo.pop()
        if macro_id in seen or macro_id not in manifest["macros"]:
            continue
        seen.add(macro_id)
        todo.extend(manifest["macros"][macro_id].get("depends_on", {}).get("macros", []))
    return sorted(seen)


# Configuration that documents a model and does not shape what it builds (the data dictionary reads
# descriptions and owners; a model's version leaves them out).
DOCUMENTATION_CONFIG = frozenset({"meta", "tags", "docs", "group", "access", "persist_docs"})


def shaping_config(node: Mapping[str, Any]) -> dict[str, Any]:
    """A node's configuration but what documents it (`DOCUMENTATION_CONFIG`)."""
    return {key: value for key, value in (node.get("config") or {}).items() if key not in DOCUMENTATION_CONFIG}


def built_by(node: Mapping[str, Any]) -> str:
    """What of a model's properties (its .yml, dbt_project.yml) shapes the relation it builds, as
    canonical JSON: its configuration (materialization, incremental strategy, hooks, contract) and
    its columns' declared types and constraints (an enforced contract casts to them). Descriptions,
    owners and tags are documentation."""
    config = shaping_config(node)
    columns = {name: [column.get("data_type"), column.get("constraints") or []] for name, column in (node.get("columns") or {}).items()}
    return json.dumps({"config": config, "columns": columns, "constraints": node.get("constraints") or []}, sort_keys=True, default=str)


def tests_of(manifest: Mapping[str, Any], unique_id: str) -> list[Mapping[str, Any]]:
    """The data tests and unit tests that check a model, sorted by id: those that depend on it, which
    `dbt build` runs with it (a relationships test checks both its models)."""
    nodes = [*manifest["nodes"].values(), *(manifest.get("unit_tests") or {}).values()]
    found = [node for node in nodes if node["resource_type"] in ("test", "unit_test") and unique_id in node.get("depends_on", {}).get("nodes", [])]
    return sorted(found, key=lambda node: node["unique_id"])


def checked_by(test: Mapping[str, Any]) -> str:
    """What a test checks, as canonical JSON: its SQL (a singular test's query, a generic test's call),
    the generic test and its arguments, a unit test's given rows, expected rows and overrides, and
    its configuration but documentation (severity, where, limit, thresholds). Its description and
    file location are left out."""
    parts = {name: test.get(name) for name in ("raw_code", "test_metadata", "column_name", "given", "expect", "overrides")}
    return json.dumps({**parts, "config": shaping_config(test)}, sort_keys=True, default=str)


def model_code_version(manifest: Mapping[str, Any], node: Mapping[str, Any], dbt_vars: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """A model's Dagster code version: a SHA-256 (first 16 hex digits) over its SQL file (dbt's
    checksum, dagster-dbt's own code version), its configuration and declared column types
    (`built_by`), the text of every macro it calls, transitively, the value of each var its SQL
    or those macros read (`var('...')`) that is not at its default (`defaults`), as the Python
    assets' versions cover the settings they read (code_version.py), and the dbt-core version
    that parsed the manifest (which compiles the SQL, and which `dbt_models`' key holds too). It also
    covers the tests that check the model (`tests_of`, `checked_by`, with their macros and vars):
    they are Dagster asset checks, which have no staleness of their own, and `dbt build` runs them
    with the model, so an edited test makes the models it checks stale.

    dagster-dbt's version is the checksum alone, so a changed `coverage_threshold` or an edited
    macro left every model fresh in Dagster's eyes while the build rewrote them."""
    tests = tests_of(manifest, node["unique_id"])
    macros = macro_closure(manifest, [macro for item in (node, *tests) for macro in item.get("depends_on", {}).get("macros", [])])
    texts = [node.get("raw_code") or "", *(test.get("raw_code") or "" for test in tests), *(manifest["macros"][macro]["macro_sql"] for macro in macros)]
    dbt_version = (manifest.get("metadata") or {}).get("dbt_version")
    digest = hashlib.sha256(f"dbt:{dbt_version}\0sql:{node['checksum']['checksum']}\0built:{built_by(node)}\0".encode())
    for test in tests:
        digest.update(f"test:{test['unique_id']}\0{checked_by(test)}\0".encode())
    for macro in macros:
        digest.update(f"macro:{macro}\0{manifest['macros'][macro]['macro_sql']}\0".encode())
    for name in sorted({name for text in texts for name in VAR_CALL.findall(text)}):
        if name in dbt_vars and dbt_vars[name] != defaults.get(name):
            digest.update(f"var:{name}={json.dumps(dbt_vars[name], sort_keys=True)}\0".encode())
    return digest.hexdigest()[:16]


@functools.cache
def default_dbt_vars() -> dict[str, Any]:
    """The dbt vars at the settings' defaults (docs/method.md's). Read once: dagster-dbt asks for a
    model's spec once per check and dependant too (about 500 times at load), and building the
    settings each time cost about 2 s."""
    from ..settings import PipelineSettings

    return PipelineSettings.of().resolve().dbt_vars


@functools.cache
def _vars_at_load() -> dict[str, Any]:
    """The dbt vars of the settings the definitions load with (`settings_at_load`), read once."""
    return settings_at_load().resolve().dbt_vars


class WorkbankDbtTranslator(DagsterDbtTranslator):
    """Models are keyed [schema, name] (marts/dim_task); sources keep [source, table] (raw/...).
    A model's code version covers its macros and the vars it reads (`model_code_version`), at the
    values the settings have when the definitions load."""

    def get_asset_spec(self, manifest: Mapping[str, Any], unique_id: str, project: DbtProject | None) -> dg.AssetSpec:
        spec = super().get_asset_spec(manifest, unique_id, project)
        node = manifest["nodes"].get(unique_id)
        if node is None or node["resource_type"] != "model":
            return spec
        return spec.replace_attributes(code_version=self._code_version(manifest, node))

    def _code_version(self, manifest: Mapping[str, Any], node: Mapping[str, Any]) -> str:
        """`model_code_version` at the load's vars, once per model of a manifest: dagster-dbt asks for
        a model's spec about eight times at load (once per check and dependant), and each asks for
        the tests that depend on the model. The manifest is held with its versions, so its id names it."""
        held = self.__dict__.setdefault("_versions", {}).setdefault(id(manifest), (manifest, {}))[1]
        if node["unique_id"] not in held:
            held[node["unique_id"]] = model_code_version(manifest, node, _vars_at_load(), default_dbt_vars())
        return held[node["unique_id"]]

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "model":
            schema = dbt_resource_props.get("config", {}).get("schema") or dbt_resource_props.get("schema")
            return dg.AssetKey([schema, dbt_resource_props["name"]])
        return super().get_asset_key(dbt_resource_props)

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        if dbt_resource_props["resource_type"] == "model":
            return "transform"
        return super().get_group_name(dbt_resource_props)

    def get_owners(self, dbt_resource_props: Mapping[str, Any]):
        """The model's `meta.owner` (dbt_project.yml gives every model one)."""
        owner = (dbt_resource_props.get("config", {}).get("meta") or {}).get("owner") or (dbt_resource_props.get("meta") or {}).get("owner")
        return [owner] if owner else []


# Duplicate source keys: a step that writes two tables (labeling/embedded_labels writes the candidates too,
# labeling/judge_validation its per-prompt outcomes) is one asset, and the sources of both tables point
# at it (meta.dagster.asset_key in models/staging/__sources.yml).
translator = WorkbankDbtTranslator(
    settings=DagsterDbtTranslatorSettings(enable_asset_checks=True, enable_code_references=True, enable_duplicate_source_asset_keys=True)
)
