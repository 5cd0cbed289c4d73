"""What `make run` asks before the audits' run (runner.run_audits): the rows a removed audit left in
the warehouse are seen there, not only in the partition sync of the same run, so a run that
failed before its audits' run still has the catalog delete them the next time."""

from __future__ import annotations

import duckdb

from workbank_dagster.runner import audits_without_a_partition


def test_a_removed_audit_s_rows_are_found_in_the_warehouse(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    assert audits_without_a_partition(path, ["a"]) == []  # no warehouse yet
    with duckdb.connect(str(path)) as con:
        con.execute("create schema analysis")
    assert audits_without_a_partition(path, ["a"]) == []  # no audit table yet
    with duckdb.connect(str(path)) as con:
        con.execute("create table analysis.user_audit as select * from (values ('a', 1), ('b', 2), ('b', 3), ('c', 4)) t(audit, row)")
    assert audits_without_a_partition(path, ["a", "c"]) == ["b"]
    assert audits_without_a_partition(path, ["a", "b", "c", "d"]) == []
    assert audits_without_a_partition(path, []) == ["a", "b", "c"]
