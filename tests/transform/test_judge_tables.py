"""The judge tables have one schema: the columns (and types) the judges' Python writes to their files
are the columns dbt's staging models of them read, every one.

The schema is declared once, as the columns of the labeling source's judge tables and of the
default judge's candidates (dbt_project/models/staging/__sources.yml): labeling/label_tables.py
reads it to write the files, macros/typed_table.sql (`source_columns`) to cast them. Before, each
side had its own list, and dbt's dropped `n_chunks`, which Python wrote.
"""

from __future__ import annotations

import os
import subprocess
from types import SimpleNamespace

import duckdb
import pandas as pd

from workbank_dagster.labeling.label_files import write_partitions
from workbank_dagster.labeling.label_tables import CANDIDATE_TYPES, JUDGEMENT_COLUMNS, JUDGEMENT_TYPES, LABEL_TYPES, label_rows
from workbank_dagster.settings import PipelineSettings
from workbank_dagster.transform.project import DBT_PROJECT_DIR, dbt_build_args, dbt_executable, profiles_dir_for

LABELER = "embedded:test-model:v0"
STAGING = {  # staging model -> the columns (SQL types) Python writes to the files it reads
    "stg_labeling__embedded_labels": LABEL_TYPES,
    "stg_labeling__embedded_judgements": JUDGEMENT_TYPES,
    "stg_labeling__llm_labels": LABEL_TYPES,  # the LLM judge never ran: no file, the same columns
    "stg_labeling__llm_judgements": JUDGEMENT_TYPES,
    "stg_labeling__embedded_candidates": CANDIDATE_TYPES,  # declared the same way (no file here)
}
DUCKDB_TYPES = {"varchar": "VARCHAR", "integer": "INTEGER", "double precision": "DOUBLE"}


def _judged() -> tuple[pd.DataFrame, pd.DataFrame]:
    """One labeled prompt (its text read in 3 windows) and one unreadable, as label_rows makes them."""
    retrieved = SimpleNamespace(
        prompts=pd.DataFrame({"benchmark": ["b"], "prompt_id": ["1"], "prompt": ["Fix the failing test"], "prompt_hash": ["h1"]}),
        chunk_counts=[3],
        unreadable=pd.DataFrame({"benchmark": ["b"], "prompt_id": ["2"], "prompt_hash": ["h2"], "reason": ["empty prompt"]}),
    )
    return label_rows(retrieved, [[(101, 0.75), (102, 0.5)]], LABELER, confidences=[0.8])


def test_the_staging_models_read_every_column_the_judges_write(tmp_path):
    labels, judgements = _judged()
    settings = PipelineSettings.of(data_dir=str(tmp_path / "data")).resolve()
    write_partitions(settings.partition_files, "embedded", LABELER, ["b"], labels, judgements)
    completed = subprocess.run(
        [dbt_executable(), *dbt_build_args(settings, select=" ".join(STAGING)),
         "--project-dir", str(DBT_PROJECT_DIR), "--profiles-dir", str(profiles_dir_for(settings)), "--target-path", str(tmp_path / "target")],
        cwd=DBT_PROJECT_DIR, env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}, capture_output=True, text=True,
    )
    assert completed.returncode == 0, completed.stdout[-4000:]
    con = duckdb.connect(str(settings.duckdb_path), read_only=True)
    try:
        for model, written in STAGING.items():
            read = con.execute(
                "select column_name, data_type from information_schema.columns where table_schema = 'staging' and table_name = ? order by ordinal_position", [model]
            ).fetchall()
            assert read == [*((name, DUCKDB_TYPES[sql]) for name, sql in written.items()), ("source_file_hash", "VARCHAR")], model
        staged = con.execute(f"select {', '.join(JUDGEMENT_COLUMNS)} from staging.stg_labeling__embedded_judgements order by prompt_id").df()
    finally:
        con.close()
    # What dbt holds is what Python wrote, column by column (n_chunks: the windows the judge read).
    pd.testing.assert_frame_equal(staged.astype(judgements.dtypes.to_dict()), judgements.sort_values("prompt_id").reset_index(drop=True))
    assert staged["n_chunks"].tolist() == [3, 0]
