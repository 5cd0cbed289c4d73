"""A renamed or removed dbt model's old relation is dropped before the models are built or kept."""

from __future__ import annotations

import duckdb

from workbank_dagster.transform.assets import drop_orphaned_relations


def _manifest() -> dict:
    def node(schema, name, kind="model", materialized="table", alias=None):
        return {"resource_type": kind, "schema": schema, "name": name, "alias": alias, "config": {"materialized": materialized}}

    return {
        "nodes": {
            "model.w.stg_a": node("staging", "stg_a", materialized="view"),
            "model.w.int_b": node("intermediate", "int_b"),
            "model.w.fct_c": node("marts", "fct_c_model", alias="fct_c"),
            "model.w.int_eph": node("intermediate", "int_eph", materialized="ephemeral"),
            "test.w.not_null": {"resource_type": "test", "schema": "marts", "name": "not_null_fct_c_id", "config": {}},
        },
        "sources": {"source.w.raw.x": {"schema": "raw", "name": "x", "identifier": None}},
    }


def test_relations_no_node_builds_are_dropped_in_dbt_s_schemas_only(tmp_path):
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    for schema in ("raw", "staging", "intermediate", "marts", "analysis"):
        con.execute(f"create schema {schema}")
    con.execute("create table raw.x as select 1 as id")
    con.execute("create view staging.stg_a as select * from raw.x")
    con.execute("create table intermediate.int_b as select 1 as id")
    con.execute("create table marts.fct_c as select 1 as id")
    # What a model's rename or removal leaves behind, in each dbt schema, and what dbt does not own.
    con.execute("create table intermediate.int_b_old as select 1 as id")
    con.execute("create view marts.fct_gone as select * from marts.fct_c")
    con.execute('create table staging."stg_a__dbt_tmp" as select 1 as id')
    con.execute("create table analysis.headline as select 1 as id")
    con.execute("create table raw.y as select 1 as id")

    dropped = drop_orphaned_relations(con, _manifest())

    assert dropped == [("intermediate", "int_b_old", "BASE TABLE"), ("marts", "fct_gone", "VIEW"), ("staging", "stg_a__dbt_tmp", "BASE TABLE")]
    left = {(s, n) for s, n in con.execute("select table_schema, table_name from information_schema.tables").fetchall()}
    assert left == {("raw", "x"), ("raw", "y"), ("staging", "stg_a"), ("intermediate", "int_b"), ("marts", "fct_c"), ("analysis", "headline")}
    assert drop_orphaned_relations(con, _manifest()) == []  # nothing left to drop
