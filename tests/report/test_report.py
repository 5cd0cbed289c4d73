"""The report's pure pieces: treemap layout, escaping, attribution, dictionary. The full run's report
is checked in test_e2e.py; hostile benchmark text end to end, in headless Chromium, in
scenarios/test_removal.py."""

from __future__ import annotations

import dagster as dg
import duckdb
import numpy as np
import pandas as pd
import pytest

from workbank_dagster.fingerprint import fingerprint
from workbank_dagster.report.elements import html_table
from workbank_dagster.report.exports import data_dictionary, dbt_descriptions
from workbank_dagster.report.figures import map_nodes
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
    step = "a step's code version"
    key = fingerprint(code=step, inputs=[a, {"k": 1}])
    assert key == fingerprint(code=step, inputs=[pd.DataFrame({"x": [1, 2]}), {"k": 1}])
    assert key != fingerprint(code=step, inputs=[pd.DataFrame({"x": [1, 3]}), {"k": 1}])
    assert key != fingerprint(code=step, inputs=[a, {"k": 2}])


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
    """2,080 h is a setting, the window WORDS_PER_CHUNK:
    the page prints whatever they are, never a copy."""
    from workbank_dagster.report import sections
    from workbank_dagster.settings import PipelineSettings

    settings = {**PipelineSettings.from_env().resolve().describe(), "hours_per_year": 2000}
    text = sections.methodology(settings, {"n_tasks": 1, "n_occupations": 1, "n_families": 1, "total_employment": 1}, pd.DataFrame(columns=["file", "bytes", "sha256"]))
    assert "employment × 2000 h" in text and "2080" not in text
    monkeypatch.setattr(sections, "WORDS_PER_CHUNK", 99)
    assert "99-word windows" in sections.methodology(settings, {}, pd.DataFrame(columns=["file", "bytes", "sha256"]))
    # The labeler's rule is its own (marts.dim_labeler), not a fixed sentence.
    rules = pd.DataFrame({"labeler": [settings["active_labeler"], "other"], "rule": ["labels what its rule says", "something else"]})
    text = sections.methodology(settings, {}, pd.DataFrame(columns=["file", "bytes", "sha256"]), rules)
    assert "the judge then labels what its rule says" in text and "something else" not in text


def test_one_family_bar_and_the_banner_quotes_held_out_figures_only(monkeypatch):
    """The family bar is defined once (report/bars.py): the README's validation table judges the
    held-out figure against it, and so does the report's banner, which quotes the held-out half of
    labels_dev only, never the pooled figures (they include the half the judge was tuned on)."""
    from workbank_dagster.report import bars, intervals, page
    from workbank_dagster.settings import REPO_ROOT

    monkeypatch.syspath_prepend(str(REPO_ROOT / "tools"))
    import readme

    h = {"labeler": "x", "labeler_family_accuracy": 0.62, "labeler_occupation_accuracy": 0.49, "holdout_gdpval_family_top1": 0.578,
         "holdout_gdpval_occupation_top1": 0.489, "holdout_theagentcompany_family_top1": 0.737, "labels_per_labeled_prompt": 2.68,
         **intervals.headline_fields("holdout_gdpval_family_top1", 0.43, 0.71)}
    line = page.labeler_line(h)
    assert "57.8%" in line and "95% CI 43.0%–71.0%, Wilson" in line and "48.9%" in line and "73.7%" in line
    assert "62.0%" not in line and "49.0%" not in line  # the pooled figures
    assert "Below the 80% family bar" in line and "2.68 per labeled prompt" in line
    assert "Below" not in page.labeler_line({**h, "holdout_gdpval_family_top1": 0.85})
    monkeypatch.setattr(page, "FAMILY_BAR", bars.Bar("GDPval family top-1", "≥ 0.50", 0.5, True, "holdout_gdpval_family_top1"))
    assert "Below" not in page.labeler_line(h)
    assert readme.BARS is bars.BARS and bars.FAMILY_BAR is bars.BARS[("gdpval", "family", "top1")]
    assert "FAMILY_ACCURACY_BAR" not in vars(page)



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
    assert [row["table"] for row in written] == ["marts.kept"]
    assert sorted(p.name for p in folder.iterdir()) == ["marts.kept.csv", "marts.kept.parquet", "notes.csv"]


def test_a_table_of_a_row_per_prompt_at_a_million_prompts_is_exported_per_benchmark(tmp_path):
    """The default limit: a table of more than ROW_LIMIT rows with a `benchmark` column is written per
    benchmark even below a spreadsheet's 1,048,576 rows. At a million prompts the marts of a row per
    prompt (1.01 M rows) were written whole, 2.6 s of every refresh that added one benchmark."""
    from workbank_dagster.report.exports import ROW_LIMIT, export_tables

    assert ROW_LIMIT < 1_048_576
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("create schema marts; create schema analysis")
    con.execute(f"create table marts.per_prompt as select 'b' || (i % 4) as benchmark, i as prompt from range({ROW_LIMIT + 1}) t(i)")
    con.execute(f"create table marts.at_the_limit as select 'b' || (i % 4) as benchmark, i as prompt from range({ROW_LIMIT}) t(i)")
    written = {row["table"]: row for row in export_tables(con, tmp_path / "tables")}
    assert written["marts.per_prompt"]["partitioned_by"] == "benchmark" and written["marts.per_prompt"]["written"] == 4
    assert written["marts.at_the_limit"]["partitioned_by"] is None
    assert (tmp_path / "tables" / "marts.per_prompt" / "benchmark=b3" / "data.parquet").is_file()
    con.close()


def test_a_long_table_is_exported_per_benchmark_and_a_refresh_writes_only_what_changed(tmp_path):
    """A table longer than the row limit, with a `benchmark` column, is one folder of one subfolder per
    benchmark; a refresh given the last listing rewrites only the benchmarks (and the whole tables) whose
    rows changed, and deletes a removed benchmark's files. At a million prompts, writing every table
    again took 73 s of the 234 s that adding one benchmark took."""
    import os

    from workbank_dagster.report.exports import export_tables

    folder = tmp_path / "tables"
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("create schema marts; create schema analysis")
    con.execute("create table marts.long as select 'b' || (i % 3) as benchmark, (i * 7919) % 101 as x, 'r' || i as label from range(30) t(i)")
    con.execute("create table analysis.small as select 1 as a")

    def files():
        return {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}

    def age_all():  # every file's mtime set far back: a rewritten file is newer
        for path in files().values():
            os.utime(path, ns=(0, 0))

    def rewritten():
        return sorted(name for name, path in files().items() if path.stat().st_mtime_ns > 0)

    def assert_files_hold_the_table():
        for value in ("b0", "b1", "b2"):
            expected = con.execute("select * from marts.long where benchmark = ? order by all", [value]).fetchall()
            for fmt in ("parquet", "csv"):
                path = folder / "marts.long" / f"benchmark={value}" / f"data.{fmt}"
                if path.parent.exists():
                    assert con.execute(f"select * from '{path}'").fetchall() == expected, path

    written = export_tables(con, folder, row_limit=10)
    assert sorted(files()) == [
        "analysis.small.csv", "analysis.small.parquet",
        *[f"marts.long/benchmark={v}/data.{fmt}" for v in ("b0", "b1", "b2") for fmt in ("csv", "parquet")],
    ]
    assert_files_hold_the_table()
    listing = written
    assert [(row["table"], row["csv"], row["partitioned_by"], row["written"]) for row in listing] == [
        ("analysis.small", "analysis.small.csv", None, 1), ("marts.long", "marts.long/", "benchmark", 3)
    ]

    age_all()
    listing = export_tables(con, folder, listing, row_limit=10)
    assert rewritten() == [] and [row["written"] for row in listing] == [0, 0]

    con.execute("update marts.long set x = x + 1 where benchmark = 'b1'; delete from marts.long where benchmark = 'b2'")
    con.execute("insert into marts.long select 'b0', 1000 + i, 'n' || i from range(2) t(i); delete from marts.long where x = 1000")
    listing = export_tables(con, folder, listing, row_limit=10)
    assert rewritten() == ["marts.long/benchmark=b0/data.csv", "marts.long/benchmark=b0/data.parquet",
                           "marts.long/benchmark=b1/data.csv", "marts.long/benchmark=b1/data.parquet"]
    assert not (folder / "marts.long" / "benchmark=b2").exists()
    assert_files_hold_the_table()

    # A lost file is written again; a table that falls under the limit becomes two files again.
    (folder / "marts.long" / "benchmark=b0" / "data.csv").unlink()
    age_all()
    listing = export_tables(con, folder, listing, row_limit=10)
    assert rewritten() == ["marts.long/benchmark=b0/data.csv", "marts.long/benchmark=b0/data.parquet"]
    listing = export_tables(con, folder, listing, row_limit=100)
    assert sorted(files()) == ["analysis.small.csv", "analysis.small.parquet", "marts.long.csv", "marts.long.parquet"]
    assert con.execute(f"select * from '{folder / 'marts.long.parquet'}'").fetchall() == con.execute("select * from marts.long order by all").fetchall()
    con.close()


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


def _limit_inputs():
    """A headline and the report's frames, small and made up, for the Limitations and like-for-like rows."""
    from workbank_dagster.report import intervals

    h = {"labeler": "embedded:m:v6", "coverage_threshold": 5, "n_occupations": 923, "n_tasks": 100, "n_tasks_covered": 40, "n_benchmarks": 3,
         "n_occupations_with_covered_task": 12, "n_families": 22, "n_families_without_covered_occupation": 4, "work_time_share_uncovered": 0.91,
         "holdout_gdpval_family_top1": 0.5, "holdout_gdpval_occupation_top1": 0.4, "exposure_coverage_ratio": 3.0,
         **intervals.headline_fields("work_time_share_uncovered", 0.90, 0.92), **intervals.headline_fields(intervals.LABEL_BAND_PREFIX, 0.86, 0.89)}
    abstention = pd.DataFrame(
        [("a", 100, 40, 60, 12, 48, 7, 0.2, True, pd.NA), ("b", 20, 0, 20, 1, 19, 0, 0.05, False, pd.NA), ("all", 120, 40, 80, 13, 67, 7, 13 / 80, True, 3)],
        columns=["benchmark", "n_prompts", "n_not_read", "n_judged", "n_abstained", "n_labeled", "n_labeled_weak", "share_abstained", "at_cap",
                 "n_tasks_covered_only_with_weak"],
    )
    ratios = pd.DataFrame(
        [("exposure", 5, "simple", 3.3, 2.2, 4.8, 0.07, 0.02, 900, 40, 923, pd.NA, pd.NA, pd.NA),
         ("exposure", 5, "adjusted", 3.0, 2.0, 4.5, None, None, 890, 40, 922, pd.NA, pd.NA, pd.NA),
         ("importance", 5, "simple", 1.1, 0.7, 1.9, 0.05, 0.04, 800, 30, 879, 0, 650, 44),
         ("importance", 5, "adjusted", 1.5, 1.04, 2.16, None, None, 400, 30, 229, 0, 650, 44)],
        columns=["ratio", "threshold", "kind", "estimate", "ci_low", "ci_high", "p_high", "p_low", "n_tasks", "n_tasks_covered", "n_occupations",
                 "occupations_all_covered", "occupations_none_covered", "occupations_without_ratings"],
    )
    frames = {
        "abstention": abstention,
        "imputed_hours": pd.DataFrame({"share_imputed": [0.068], "n_tasks_imputed": [1292]}),
        "benchmarks": pd.DataFrame({"benchmark": ["a", "b", "c"], "n_prompts": [100, 20, 5]}),
        "covered_by_benchmarks": pd.DataFrame({"n_benchmarks": [1, 2], "n_tasks": [17, 23]}),
        "validation": pd.DataFrame({"labeler": "embedded:m:v6", "yardstick": "reference", "subset": "holdout", "level": ["task", "occupation"],
                                    "metric": "precision", "value": [0.09, 0.3]}),
        "ratios": ratios,
        "coverage_coefs": pd.DataFrame({"term": ["log_wage_bill"], "estimate": [0.2], "std_error": [0.08], "p_value": [0.01]}),
    }
    return h, frames


def test_limitations_are_written_from_the_run_s_outputs(monkeypatch):
    """Every limitation's figures come from the headline and the frames: change a frame, the text
    changes; leave a frame out, its limitation is left out (never a typed figure)."""
    from workbank_dagster.report.limits import limitations
    from workbank_dagster.settings import REPO_ROOT

    monkeypatch.syspath_prepend(str(REPO_ROOT / "tools"))
    from readme import README_KEYS

    h, frames = _limit_inputs()
    found = {item.key: item.text for item in limitations(h, frames)}
    assert set(README_KEYS) <= set(found) and {"importance", "kinds"} <= set(found)
    assert "a: 40 of its 100 prompts (40%)" in found["language"] and "b:" not in found["language"]
    assert "a abstains on 12 of the 60 prompts it read on weak evidence (20%, its cap), and 7 of the 48" in found["cap"] and "lift 3 of the 40 covered" in found["cap"]
    errands = {**frames, "abstention": frames["abstention"].assign(n_abstained=[42, 1, 43], n_abstained_errand=[30, 0, 30])}
    assert ("a abstains on 12 of the 60 prompts it read on weak evidence (20%, its cap) and on 30 personal errands outside it, and 7 of the 48"
            in {i.key: i.text for i in limitations(h, errands)}["cap"])
    assert "6.8% of US work hours are on the 1,292 tasks" in found["time_shares"]
    assert "differ 20-fold (a 100 prompts, c 5)" in found["sizes"] and "17 of the 40 covered tasks" in found["sizes"]
    assert "50.0% of prompts (the bar is 80%)" in found["precision"] and "9.0% of its labels" in found["precision"]
    # Issue 38: that wrong labels flatten both ratios was never measured; the text says the errors are systematic.
    assert "cannot be assumed to flatten both ratios" in found["precision"] and "which flattens both ratios" not in found["precision"]
    assert "intent yardstick" not in found["precision"]  # not scored here: not mentioned
    intent = pd.DataFrame({"labeler": "embedded:m:v6", "yardstick": "intent", "subset": "holdout", "benchmark": "all", "level": "occupation",
                           "metric": "top1_plausible", "value": [0.758]})
    scored = {**frames, "validation": pd.concat([frames["validation"].assign(benchmark="all"), intent], ignore_index=True)}
    assert "intent yardstick it was not tuned on, 75.8% of a benchmark's labeled prompts" in {i.key: i.text for i in limitations(h, scored)}["precision"]
    assert "229 of 923 occupations" in found["importance"] and "650 leave" in found["importance"]
    assert "3.00×" in found["kinds"] and "3.30×" in found["kinds"]
    frames["imputed_hours"] = pd.DataFrame({"share_imputed": [0.1], "n_tasks_imputed": [7]})
    assert "10.0% of US work hours are on the 7 tasks" in {i.key: i.text for i in limitations(h, frames)}["time_shares"]
    del frames["imputed_hours"], frames["ratios"]
    left = {item.key for item in limitations(h, frames)}
    assert not {"time_shares", "importance", "kinds"} & left
    assert "llm" not in {i.key for i in limitations(h, {**frames, "validation": frames["validation"].assign(labeler="llm:gpt:t2")})}


def test_like_for_like_sets_the_article_s_published_figures_beside_the_run_s():
    from workbank_dagster.report import article

    h, frames = _limit_inputs()
    rows = {what: (ours, theirs) for what, ours, theirs in article.like_for_like(h, frames)}
    assert rows["occupations with a task covered (≥ 5 prompts)"] == ("12 of 923", "208 of 923")
    assert rows["families with no covered occupation"] == ("4 of 22", "6 of 22")
    assert rows["O*NET tasks"][0].startswith("100:") and "101 lines" in rows["O*NET tasks"][0] and rows["O*NET tasks"][1] == "18,797"
    assert "at least 26 of the article's are missing" in rows["benchmarks"][0] and "APEX" in rows["benchmarks"][0]
    assert rows["exposed / not exposed, simple: P(covered | exposed) / P(covered | not)"][0].startswith("3.30× (95% CI 2.20–4.80, cluster-robust Wald")
    assert "on 229 of 923 occupations: 650 with all or none" in rows["most / least important quintile, adjusted (occupation fixed effects)"][0]
    assert "resampling spread 90.0%–92.0%" in rows["US work time on uncovered tasks"][0] and "label-uncertainty band 86.0%–89.0%" in rows["US work time on uncovered tasks"][0]
    wage = rows["larger wage bill, controlling for exposure"][0]
    import math

    assert f"{math.exp(0.2 * math.log(2)):.2f}" in wage and "p = 0.010" in wage
    compact = article.like_for_like(h, frames, compact=True)
    assert [r[0] for r in compact][:2] == ["benchmarks", "O*NET tasks"] and len(compact) == 5
    assert "3.30×" in compact[2][1] and "3.00×" in compact[2][1]
    header, by_threshold = article.ratios_by_threshold(h, frames)
    assert header == ["ratio", "threshold 5 (headline)"] and by_threshold[3] == ["most / least important, adjusted (occupations kept)", "1.50 (1.04–2.16); 229"]


def test_the_report_says_where_the_estimate_lies_against_the_label_uncertainty_band():
    from workbank_dagster.report.limits import band_position

    band = pd.Series({"share_uncovered": 0.906, "band_low": 0.878, "band_high": 0.894, "tasks_labeled_mean": 4668.2, "n_tasks_labeled": 3931,
                      "n_tasks_covered_low": 921, "n_tasks_covered_high": 977, "n_tasks_covered": 905})
    above = band_position(band)
    assert above.startswith("The estimate, 90.6%, lies above the band") and "4,668 on average against the judge's 3,931" in above
    assert "921–977 against 905" in above and "look larger" in above
    assert band_position(band.copy().replace({0.906: 0.88})) == "The estimate lies inside the band."
    assert "lies below the band" in band_position(band.copy().replace({0.906: 0.85})) and "look smaller" in band_position(band.copy().replace({0.906: 0.85}))
    assert band_position(band.copy().replace({0.878: float("nan")})) == ""


def test_charts_of_a_thousand_benchmarks_show_the_largest_and_say_how_many_they_leave_out(tmp_path):
    """Past MOST_CONTRIBUTIONS_SHOWN benchmarks the contribution chart draws the ones that cover most
    alone and its title says of how many; past MOST_BENCHMARKS_IN_LEGEND the model-score scatter keeps
    a legend entry for the benchmarks with most scores and one for the rest. Up to those, every
    benchmark is drawn, under the old title (the real run's 24 benchmarks)."""
    import re

    from workbank_dagster.report.figures import MOST_BENCHMARKS_IN_LEGEND, MOST_CONTRIBUTIONS_SHOWN, benchmark_contribution
    from workbank_dagster.report.static_figures import benchmark_contribution_svg, model_scores_svg

    def contribution(n: int) -> pd.DataFrame:
        return pd.DataFrame({"benchmark": [f"b{i:04d}" for i in range(n)], "n_tasks_covered_only_with_it": [i % 97 for i in range(n)],
                             "n_occupations_covered_only_with_it": 1, "change_without_it": 0.001})

    few, many = contribution(24), contribution(1001)
    assert list(benchmark_contribution(few).data[0].y) == list(few.sort_values(["n_tasks_covered_only_with_it", "benchmark"], ascending=[True, False])["benchmark"])
    assert benchmark_contribution(few).layout.title.text.endswith("Tasks covered only with each benchmark")
    drawn = benchmark_contribution(many)
    largest = many.sort_values(["n_tasks_covered_only_with_it", "benchmark"], ascending=[False, True]).head(MOST_CONTRIBUTIONS_SHOWN)
    assert list(drawn.data[0].y) == list(largest["benchmark"])[::-1] and list(drawn.data[0].x) == list(largest["n_tasks_covered_only_with_it"])[::-1]
    assert f"the {MOST_CONTRIBUTIONS_SHOWN} that cover most alone, of 1,001" in drawn.layout.title.text
    svg = benchmark_contribution_svg(many, tmp_path / "contribution.svg").read_text()
    assert "of 1,001" in svg and sorted(set(re.findall(r"b\d{4}", svg))) == sorted(largest["benchmark"])

    scores = pd.DataFrame({"benchmark": [f"s{i % 30:02d}" for i in range(300)] + ["s00"] * 5, "simple_score": 0.5, "weighted_score": 0.5})
    legend = re.findall(r">(s\d\d|[\d,]+ other benchmarks)<", model_scores_svg(scores, tmp_path / "scores.svg").read_text())
    assert legend == [f"s{i:02d}" for i in range(MOST_BENCHMARKS_IN_LEGEND)] + ["10 other benchmarks"]  # s00 has the most, then ties by name


def test_a_model_score_scatter_past_most_vector_points_is_one_image_in_the_svg_and_stays_deterministic(tmp_path):
    """At a million prompts the scatter had 59,107 points, one SVG element each (8.7 MB). Past
    MOST_VECTOR_POINTS the points are one embedded image, axes and legend still text; up to it,
    every point is a vector mark. Either way a re-draw writes the same bytes."""
    import re

    from workbank_dagster.report.static_figures import MOST_VECTOR_POINTS, model_scores_svg

    def scores(n: int) -> pd.DataFrame:
        rng = np.random.default_rng(0)
        return pd.DataFrame({"benchmark": [f"s{i % 40:02d}" for i in range(n)], "simple_score": rng.random(n), "weighted_score": rng.random(n)})

    vector = model_scores_svg(scores(MOST_VECTOR_POINTS), tmp_path / "few.svg").read_text()
    assert "<image" not in vector and len(re.findall(r"<use ", vector)) >= MOST_VECTOR_POINTS
    just_past, many = (model_scores_svg(scores(n), tmp_path / f"{n}.svg") for n in (MOST_VECTOR_POINTS + 1, 8 * MOST_VECTOR_POINTS))
    for raster in (just_past, many):
        text = raster.read_text()
        assert len(re.findall(r"<image ", text)) == 1 and len(re.findall(r"<use ", text)) < 100
        assert "other benchmarks" in text and "O*NET-weighted score" in text  # the legend and axes are still text
    assert many.stat().st_size < 8 * len(vector) / 3  # eight times the points as vector marks would be some eight times the bytes
    assert model_scores_svg(scores(8 * MOST_VECTOR_POINTS), tmp_path / "again.svg").read_bytes() == many.read_bytes()
