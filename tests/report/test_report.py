"""The report's pure pieces: treemap layout, escaping, attribution, dictionary. The full run's report
is checked in test_e2e.py; hostile benchmark text end to end, in headless Chromium, in
scenarios/test_removal.py."""

from __future__ import annotations

import dagster as dg
import duckdb
import pandas as pd
import pytest

from workbank_dagster.fingerprint import fingerprint
from workbank_dagster.report.exports import data_dictionary, dbt_descriptions
from workbank_dagster.report.figures import map_nodes
from workbank_dagster.report.page import html_table
from workbank_dagster.report.static_figures import squarify

HOSTILE_PROMPT = "Summarise <script>window.__pwned = 1;</script> the memo titled 'Q3'; DROP TABLE raw.benchmark_prompts; -- \"quoted\" & more"


# --- pure pieces ---------------------------------------------------------------------------------


@pytest.mark.parametrize("values", [[6, 6, 4, 3, 2, 2, 1], [1], [5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [3, 3]])
def test_squarify_tiles_the_box_in_proportion(values):
    rects = squarify(values, 0, 0, 60, 40)
    assert len(rects) == len(values)
    total = sum(values)
    for (x, y, w, h), v in zip(rects, values):
        assert w > 0 and h > 0
        assert -1e-9 <= x and x + w <= 60 + 1e-9 and -1e-9 <= y and y + h <= 40 + 1e-9
        assert w * h == pytest.approx(v / total * 60 * 40)
    assert sum(w * h for _, _, w, h in rects) == pytest.approx(60 * 40)
    # No two tiles overlap.
    for i, (x1, y1, w1, h1) in enumerate(rects):
        for x2, y2, w2, h2 in rects[i + 1 :]:
            overlap = max(0, min(x1 + w1, x2 + w2) - max(x1, x2)) * max(0, min(y1 + h1, y2 + h2) - max(y1, y2))
            assert overlap < 1e-6


def _toy_map():
    occupations = pd.DataFrame(
        {
            "onet_soc_code": ["11-1011.00", "11-2022.00", "15-1252.00"],
            "title": ["Chief Executives", "<script>alert(1)</script> Managers", "Software Developers"],
            "family_code": ["11-0000", "11-0000", "15-0000"],
            "n_tasks": [30, 17, 20],
            "n_tasks_covered": [3, 0, 10],
            "share_tasks_covered": [0.1, 0.0, 0.5],
            "employment": [100.0, float("nan"), 300.0],
            "n_benchmarks": [2, 0, 7],
            "top_benchmarks": ["gdpval (4), workbench (1)", "", "a (9), b (8), c (7), d (6), e (5)"],
        }
    )
    families = pd.DataFrame(
        {
            "family_code": ["11-0000", "15-0000"],
            "family_title": ["Management Occupations", "Computer and Mathematical Occupations"],
            "n_occupations": [2, 1],
            "n_occupations_with_coverage": [1, 1],
            "n_tasks": [47, 20],
            "n_tasks_covered": [3, 10],
        }
    )
    return occupations, families


def test_map_nodes_are_a_tree_whose_totals_add_up_and_whose_text_is_escaped():
    occupations, families = _toy_map()
    nodes = map_nodes(occupations, families)
    assert len(nodes) == 1 + 2 + 3
    ids = set(nodes["id"])
    assert all(parent in ids for parent in nodes["parent"] if parent)
    for fam in nodes[nodes["level"] == "family"].itertuples():
        assert fam.value == nodes.loc[nodes["parent"] == fam.id, "value"].sum()
    assert nodes.loc[nodes["id"] == "all", "value"].item() == 67
    hostile = nodes[nodes["id"] == "occupation:11-2022.00"].iloc[0]
    assert "<script>" not in hostile.label and "&lt;script&gt;" in hostile.label
    assert "no OEWS employment" in hostile.hover and "no benchmark reaches it" in hostile.hover
    assert "and 2 more" in nodes[nodes["id"] == "occupation:15-1252.00"].iloc[0].hover


def test_html_table_escapes_every_cell():
    frame = pd.DataFrame({"benchmark": ["x"], "example_prompt": [HOSTILE_PROMPT], "n": [1234]})
    out = html_table(frame, [("benchmark", "b", None), ("example_prompt", "p", None), ("n", "n", lambda v: f"{v:,}")])
    assert "<script>" not in out and "&lt;script&gt;" in out and "&#x27;Q3&#x27;" in out
    assert '<td class="num">1,234</td>' in out


def test_data_dictionary_takes_dbt_docs_for_models_and_asset_descriptions_for_the_rest():
    manifest = {"nodes": {"model.p.dim_task": {"resource_type": "model", "schema": "marts", "name": "dim_task", "description": "One row per task.",
                                                "columns": {"task_id": {"description": "O*NET task id."}}}}}
    catalog = {"nodes": {"model.p.dim_task": {"columns": {"task_id": {"type": "INTEGER"}, "task": {"type": "VARCHAR"}}}}}
    types = {"marts.dim_task": [("task_id", "INTEGER"), ("task", "VARCHAR")], "analysis.x": [("estimate", "DOUBLE")]}
    exports = pd.DataFrame({"table": ["marts.dim_task", "analysis.x"], "rows": [3, 1]})
    markdown, rows = data_dictionary(types, dbt_descriptions(manifest, catalog), {"analysis.x": "An estimate."}, exports)
    assert "One row per task." in markdown and "An estimate." in markdown and "3 rows" in markdown
    by_column = {(r["table"], r["column"]): r for r in rows}
    assert by_column[("marts.dim_task", "task_id")]["description"] == "O*NET task id."
    assert by_column[("marts.dim_task", "task")]["type"] == "VARCHAR"
    assert by_column[("analysis.x", "estimate")]["documented_by"].startswith("Dagster")


def test_fingerprint_changes_with_content():
    a = pd.DataFrame({"x": [1, 2]})
    step = ["workbank_dagster.report.exports"]
    key = fingerprint(modules=step, inputs=[a, {"k": 1}])
    assert key == fingerprint(modules=step, inputs=[pd.DataFrame({"x": [1, 2]}), {"k": 1}])
    assert key != fingerprint(modules=step, inputs=[pd.DataFrame({"x": [1, 3]}), {"k": 1}])
    assert key != fingerprint(modules=step, inputs=[a, {"k": 2}])


def test_a_report_step_keeps_its_files_only_under_its_recorded_key_and_while_they_are_there(tmp_path):
    """report.assets.kept: the key its last materialization recorded (no stamp file), and the files."""
    from workbank_dagster.report.assets import kept

    out, key, seen = tmp_path / "out.html", {"value": "k1"}, []

    @dg.asset
    def page(context):
        seen.append(kept(context, key["value"], out))
        if not seen[-1]:
            out.write_text("drawn")
        return dg.MaterializeResult(metadata={"inputs_sha256": key["value"]})

    instance = dg.DagsterInstance.ephemeral()
    for _ in range(2):
        assert dg.materialize([page], instance=instance).success
    out.unlink()  # the file is gone: drawn again
    assert dg.materialize([page], instance=instance).success
    key["value"] = "k2"  # an input changed: drawn again
    assert dg.materialize([page], instance=instance).success
    assert seen == [False, True, False, False]
    assert not list(tmp_path.glob("*sha256*"))


def test_figures_the_report_types_come_from_where_they_are_defined(monkeypatch):
    """2,080 h is a setting, the family bar the page's FAMILY_ACCURACY_BAR, the window WORDS_PER_CHUNK:
    the page prints whatever they are, never a copy."""
    from workbank_dagster.report import page
    from workbank_dagster.settings import PipelineSettings

    settings = {**PipelineSettings.from_env().resolve().describe(), "hours_per_year": 2000}
    text = page.methodology(settings, {"n_tasks": 1, "n_occupations": 1, "n_families": 1, "total_employment": 1}, pd.DataFrame(columns=["file", "bytes", "sha256"]))
    assert "employment × 2000 h" in text and "2080" not in text
    monkeypatch.setattr(page, "WORDS_PER_CHUNK", 99)
    assert "99-word windows" in page.methodology(settings, {}, pd.DataFrame(columns=["file", "bytes", "sha256"]))
    monkeypatch.setattr(page, "FAMILY_ACCURACY_BAR", 0.5)
    line = page.labeler_line({"labeler": "x", "labeler_family_accuracy": 0.45, "labeler_occupation_accuracy": 0.3})
    assert "Below the 50% family-accuracy bar" in line
    assert "Below" not in page.labeler_line({"labeler": "x", "labeler_family_accuracy": 0.55, "labeler_occupation_accuracy": 0.3})



def test_exports_leave_no_file_of_a_table_no_longer_exported(tmp_path):
    """A table that left the warehouse, or is no longer exported, loses its files: the report links
    the run's exports (exports.json), and a stale CSV once stayed linked there."""
    from workbank_dagster.report.exports import export_tables

    folder = tmp_path / "tables"
    folder.mkdir()
    for stale in ("marts.gone.csv", "marts.gone.parquet", "analysis.user_audit.csv"):
        (folder / stale).write_text("x\n")
    (folder / "notes.csv").write_text("kept: not an export\n")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("create schema marts; create table marts.kept as select 1 as a")
    con.execute("create schema analysis; create table analysis.user_audit as select 1 as a")
    written = export_tables(con, folder)
    con.close()
    assert written["table"].tolist() == ["marts.kept"]
    assert sorted(p.name for p in folder.iterdir()) == ["marts.kept.csv", "marts.kept.parquet", "notes.csv"]


def test_the_page_template_escapes_what_is_not_marked_safe():
    """The page is a Jinja2 template with autoescape on: a section title or plain lede that holds
    markup shows as text (the lede was once inserted raw by convention); only what the helpers
    built and marked safe (tables, figures, an emphasised lede) stays markup."""
    from markupsafe import Markup

    from workbank_dagster.report.page import TEMPLATES, _section

    sections = [
        _section("a", "<i>title</i>", "plain <script>alert(1)</script>", "<p>body</p>"),
        _section("b", "B", Markup("with <b>{}</b>").format("<x>"), "<p>two</p>"),
    ]
    page = TEMPLATES.get_template("report.html.j2").render(
        title="t", heading="h", css=Markup(""), plotlyjs=Markup(""), n_prompts="1", n_benchmarks="1", n_tasks="1", n_occupations="1",
        cards=Markup(""), labeler_line=Markup(""), rejected_files=Markup(""), nav=[("a", "<A>")], sections=sections, credit="O*NET <credit>",
        version="Version: labeler <v6>.",
    )
    assert "<h2>&lt;i&gt;title&lt;/i&gt;</h2>" in page
    assert "plain &lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert "with <b>&lt;x&gt;</b>" in page and "<p>body</p>" in page
    assert '<a href="#a">&lt;A&gt;</a>' in page and "O*NET &lt;credit&gt;" in page
    assert "<span id='version'>Version: labeler &lt;v6&gt;.</span>" in page


def test_the_history_figure_stays_within_0_and_100_percent_and_scroll_headers_stick_to_their_box():
    """One refresh autoscaled the trend's axis to 0-190%, and a scroll box's sticky header sat
    2.4rem down it, over the first row (seen in the e2e screenshot of the history section)."""
    import pandas as pd

    from workbank_dagster.analysis.history import history_table
    from workbank_dagster.report import figures, page

    one = history_table([{"materialized_at": 1.0, "run_id": "r", "numbers": {"work_time_share_uncovered": 0.995}, "benchmarks": {"a": "1"}}])
    low, high = figures.coverage_history(one).layout.yaxis.range
    assert 0.0 <= low < 0.995 < high <= 1.0
    assert figures.share_range(pd.Series([0.2, 0.4])) == pytest.approx([0.15, 0.45])
    assert ".scroll th { top:0; }" in page.CSS
