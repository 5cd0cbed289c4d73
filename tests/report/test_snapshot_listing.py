"""The scenario tests' snapshot reads the exports listing (exports.json) canonically: a log table's
rows and every table's fingerprint (a bit-level digest of its rows) are not what two runs must share;
which tables were exported, with how many rows, is."""

import json

import warehouse_snapshot as snap


def _listing(folder, history_rows: int, history_print: str, task_rows: int, task_print: str):
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"table": "analysis.coverage_history", "rows": history_rows, "parquet": "analysis.coverage_history.parquet", "columns": "c1", "fingerprint": history_print},
        {"table": "marts.fct_task_coverage", "rows": task_rows, "parquet": "marts.fct_task_coverage.parquet", "columns": "c2", "fingerprint": task_print},
    ]
    (folder / "exports.json").write_text(json.dumps(rows))
    return snap.file_hashes(folder)["canonical"]["exports.json"]


def test_the_listing_differs_canonically_only_where_the_tables_do(tmp_path):
    first = _listing(tmp_path / "a", 3, "3:111", 10, "10:222")
    # Another refresh logged (one more history row), and the same table's rows hashed bit-differently.
    assert _listing(tmp_path / "b", 4, "4:999", 10, "10:333") == first
    # A table with another number of rows is another export.
    assert _listing(tmp_path / "c", 3, "3:111", 11, "11:222") != first
