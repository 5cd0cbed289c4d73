"""The dbt models' data versions (transform/metadata.py, `model_data_versions`): what each model's
relation holds, so Dagster calls what reads a model stale exactly when the model's content moved.

Before, the models reported none, and the version Dagster derived from their code and inputs did
not move when one benchmark's labels changed: the audit that reads the coverage stayed fresh."""

from __future__ import annotations

import duckdb

from workbank_dagster import warehouse
from workbank_dagster.transform.metadata import model_data_versions


def _node(name: str, materialized: str, parents: list[str], sql: str = "select 1") -> dict:
    return {
        "unique_id": f"model.p.{name}",
        "name": name,
        "schema": "marts",
        "resource_type": "model",
        "config": {"materialized": materialized},
        "depends_on": {"nodes": parents, "macros": []},
        "checksum": {"checksum": sql},
        "raw_code": sql,
    }


MANIFEST = {
    "sources": {"source.p.labeling.labels": {"schema": "labeling", "name": "labels"}},
    "nodes": {
        "model.p.coverage": _node("coverage", "table", ["source.p.labeling.labels"]),
        "model.p.labels_view": _node("labels_view", "view", ["source.p.labeling.labels"]),
        "model.p.over_both": _node("over_both", "view", ["model.p.coverage", "model.p.labels_view"]),
    },
    "macros": {},
}
ALL = list(MANIFEST["nodes"])


def _warehouse(rows: list[tuple[str, float]]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("create schema marts")
    con.execute("create table marts.coverage (task varchar, share double)")
    con.executemany("insert into marts.coverage values (?, ?)", rows)
    return con


def test_a_table_s_version_is_its_content_whatever_the_row_order():
    rows = [("a", 0.5), ("b", 0.25), ("a", 0.5)]
    first = model_data_versions(_warehouse(rows), MANIFEST, ALL, {("labeling", "labels"): "s1"}, {})
    again = model_data_versions(_warehouse(rows[::-1]), MANIFEST, ALL, {("labeling", "labels"): "s1"}, {})
    assert first == again
    assert first["model.p.coverage"] == "table:" + warehouse.table_hash(_warehouse(rows), "marts", "coverage")
    # One row changed: the table moves, and the view over it, not the view that reads only the source.
    moved = model_data_versions(_warehouse([("a", 0.5), ("b", 0.75), ("a", 0.5)]), MANIFEST, ALL, {("labeling", "labels"): "s1"}, {})
    assert {uid for uid in ALL if moved[uid] != first[uid]} == {"model.p.coverage", "model.p.over_both"}


def test_a_view_s_version_follows_its_sources_and_its_code():
    rows = [("a", 0.5)]
    first = model_data_versions(_warehouse(rows), MANIFEST, ALL, {("labeling", "labels"): "s1"}, {})
    # Another source content (a benchmark relabeled): the views move; the table holds what it held.
    relabeled = model_data_versions(_warehouse(rows), MANIFEST, ALL, {("labeling", "labels"): "s2"}, {})
    assert {uid for uid in ALL if relabeled[uid] != first[uid]} == {"model.p.labels_view", "model.p.over_both"}
    # An edited view: it moves, and what selects from it.
    edited = {**MANIFEST, "nodes": {**MANIFEST["nodes"], "model.p.labels_view": _node("labels_view", "view", ["source.p.labeling.labels"], "select 2")}}
    changed = model_data_versions(_warehouse(rows), edited, ALL, {("labeling", "labels"): "s1"}, {})
    assert {uid for uid in ALL if changed[uid] != first[uid]} == {"model.p.labels_view", "model.p.over_both"}
    # Asked for one model, it gives that one, with the same version.
    assert model_data_versions(_warehouse(rows), MANIFEST, ["model.p.over_both"], {("labeling", "labels"): "s1"}, {}) == {
        "model.p.over_both": first["model.p.over_both"]
    }
