"""Every parser on its real file (counts from each SOURCES.md), and bad input failing where a person can find it."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from workbank_dagster.common import SLUG_PATTERN
from workbank_dagster.sources import bls, exposure, onet, timeshare, workbank
from workbank_dagster.sources.benchmarks import check_slug, read_benchmark_prompts, read_benchmark_results, slug_files
from workbank_dagster.sources.registry import SOURCES, SOURCES_BY_TABLE
from workbank_dagster.sources.validate import SourceFormatError

EXPECTED_ROWS = {
    "onet_task_statements": 18_796,
    "onet_occupations": 1_016,
    "onet_task_importance": 17_639,
    "onet_telework": 968,
    "onet_alternate_titles": 56_560,
    "onet_reported_titles": 7_796,
    "onet_technology_skills": 32_681,
    "onet_related_occupations": 18_460,
    "onet_task_dwas": 23_233,
    "onet_dwa_reference": 2_087,
    "oews_national": 1_403,
    "soc_major_groups": 23,
    "onet_oews_crosswalk": 997,
    "soc_2010_2018_crosswalk": 900,  # bls/SOURCES.md says 899; the file has 900 data rows after its header
    "eloundou_task_exposure": 19_265,
    "eloundou_occupation_exposure": 923,
    "task_time_shares": 17_525,
    "workbank_worker_desires": 5_731,
    "workbank_expert_ratings": 2_057 - 19,
    "workbank_task_metadata": 2_131,
}


@pytest.mark.parametrize("table", sorted(EXPECTED_ROWS))
def test_real_file_parses_with_documented_row_count(source_dir, table):
    source = SOURCES_BY_TABLE[table]
    frame = source.read(source_dir / source.path)
    assert len(frame) == EXPECTED_ROWS[table]
    for key in source.keys:
        assert frame[key].notna().all()
    if source.keys:
        assert not frame.duplicated(list(source.keys)).any()


def test_registry_covers_every_expected_table():
    assert {s.table for s in SOURCES} == set(EXPECTED_ROWS)


def check_task_statement_facts(tasks: pd.DataFrame) -> None:
    """onet/SOURCES.md: 923 codes; Task Type Core 13,417 / Supplemental 4,222 / empty 1,157."""
    assert tasks["onet_soc_code"].nunique() == 923
    counts = tasks["task_type"].value_counts(dropna=True).to_dict()
    assert counts == {"Core": 13_417, "Supplemental": 4_222}, counts
    assert int(tasks["task_type"].isna().sum()) == 1_157
    assert str(tasks["task_id"].dtype) == "Int64"


def test_task_statements_facts(source_dir):
    tasks = onet.read_task_statements(source_dir / onet.TASK_STATEMENTS)
    check_task_statement_facts(tasks)
    # The check can fail: a Core task turned Supplemental (the counts), or typed empty (the NULLs).
    broken = tasks.copy()
    broken.loc[broken.index[broken["task_type"] == "Core"][0], "task_type"] = "Supplemental"
    with pytest.raises(AssertionError):
        check_task_statement_facts(broken)
    broken = tasks.copy()
    broken.loc[broken.index[broken["task_type"] == "Core"][0], "task_type"] = pd.NA
    with pytest.raises(AssertionError):
        check_task_statement_facts(broken)


def test_onet_titles_facts(source_dir):
    titles = onet.read_alternate_titles(source_dir / onet.ALTERNATE_TITLES)
    occupations = onet.read_occupations(source_dir / onet.OCCUPATIONS)
    assert titles["onet_soc_code"].nunique() == 1_016 and set(titles["onet_soc_code"]) == set(occupations["onet_soc_code"])
    def codes_of(title: str) -> set[str]:
        return set(titles.loc[titles["alternate_title"] == title, "onet_soc_code"])

    assert codes_of("Staff Accountant") == {"13-2011.00"} and codes_of("Software Engineer") == {"15-1252.00"}
    # Two titles of 21-1014.00 are listed without and with their short title (onet/SOURCES.md): both rows kept.
    assert titles.attrs["titles_listed_twice"] == 2
    repeated = titles[titles.duplicated(["onet_soc_code", "alternate_title"], keep=False)]
    assert set(repeated["onet_soc_code"]) == {"21-1014.00"} and repeated["short_title"].isna().sum() == 2
    assert titles["short_title"].notna().sum() == 3_574
    reported = onet.read_reported_titles(source_dir / onet.REPORTED_TITLES)
    assert reported["onet_soc_code"].nunique() == 901 and int(reported["shown_in_my_next_move"].sum()) == 3_549
    assert set(reported["onet_soc_code"]) <= set(occupations["onet_soc_code"])


def test_onet_technology_skills_facts(source_dir):
    skills = onet.read_technology_skills(source_dir / onet.TECHNOLOGY_SKILLS)
    assert skills["onet_soc_code"].nunique() == 923
    assert str(skills["hot_technology"].dtype) == "boolean" and int(skills["hot_technology"].sum()) == 11_616
    assert int(skills["in_demand"].sum()) == 2_339
    python = skills[skills["example"] == "Python"]
    assert "15-1252.00" in set(python["onet_soc_code"])
    assert skills.groupby("commodity_code")["commodity_title"].nunique().max() == 1


def test_onet_related_occupations_have_20_ranked_neighbours(source_dir):
    related = onet.read_related_occupations(source_dir / onet.RELATED_OCCUPATIONS)
    occupations = set(onet.read_occupations(source_dir / onet.OCCUPATIONS)["onet_soc_code"])
    per_occupation = related.groupby("onet_soc_code")["related_index"].agg(["count", "min", "max"])
    assert len(per_occupation) == 923 and (per_occupation["count"] == 20).all()
    assert (per_occupation["min"] == 1).all() and (per_occupation["max"] == 20).all()
    tiers = related.groupby("relatedness_tier")["related_index"].agg(["min", "max"]).to_dict("index")
    assert tiers == {"Primary-Short": {"min": 1, "max": 5}, "Primary-Long": {"min": 6, "max": 10}, "Supplemental": {"min": 11, "max": 20}}
    assert set(related["onet_soc_code"]) <= occupations and set(related["related_onet_soc_code"]) <= occupations
    assert not (related["onet_soc_code"] == related["related_onet_soc_code"]).any()


def test_onet_task_dwas_reference_tasks_and_dwas(source_dir):
    links = onet.read_task_dwas(source_dir / onet.TASK_DWAS)
    tasks = onet.read_task_statements(source_dir / onet.TASK_STATEMENTS)
    dwas = onet.read_dwa_reference(source_dir / onet.DWA_REFERENCE)
    # Every linked task is a 29.3 task statement of the same occupation; 301 tasks have no DWA.
    joined = links.merge(tasks[["task_id", "onet_soc_code"]], on="task_id", how="left", suffixes=("", "_task"))
    assert joined["onet_soc_code_task"].notna().all() and (joined["onet_soc_code"] == joined["onet_soc_code_task"]).all()
    assert links["task_id"].nunique() == 18_495 and len(set(tasks["task_id"]) - set(links["task_id"])) == 301
    assert set(links["dwa_id"]) <= set(dwas["dwa_id"]) and links["dwa_id"].nunique() == 2_082
    assert dwas["iwa_id"].nunique() == 332 and dwas["element_id"].nunique() == 37
    assert str(links["task_id"].dtype) == "Int64"


def test_oews_symbols_parsed(source_dir):
    oews = bls.read_oews_national(source_dir / bls.OEWS_NATIONAL)
    detailed = oews[oews["o_group"] == "detailed"]
    assert len(detailed) == 831
    assert int(oews.loc[oews["o_group"] == "total", "tot_emp"].iloc[0]) == 154_187_380
    # '*' (not available) is NULL, never 0; '#' is the top code and flagged.
    annual_only = detailed[detailed["annual_only"]]
    assert annual_only["h_mean"].isna().all() and len(annual_only) > 0
    topcoded = oews[oews["h_median_topcoded"]]
    assert len(topcoded) == 19 and (topcoded["h_median"] == bls.TOP_CODE_HOURLY).all()


def test_soc_2010_2018_crosswalk_facts(source_dir):
    crosswalk = bls.read_soc_2010_2018_crosswalk(source_dir / bls.SOC_2010_2018_CROSSWALK)
    # The byte-order mark does not leak into the first column's name; 840 2010 codes -> 867 2018 codes (bls/SOURCES.md).
    assert crosswalk["soc_2010_code"].nunique() == 840 and crosswalk["soc_2018_code"].nunique() == 867
    assert set(crosswalk.loc[crosswalk["soc_2018_code"] == "15-1252", "soc_2010_code"]) == {"15-1132", "15-1133"}
    assert set(crosswalk.loc[crosswalk["soc_2010_code"] == "11-2031", "soc_2018_code"]) == {"11-2032", "11-2033"}
    # '(#)' marks exactly the 2010 codes that split, '(##)' exactly the 2018 codes fed by several 2010 codes.
    splits = crosswalk.groupby("soc_2010_code")["soc_2018_code"].nunique() > 1
    marked = crosswalk.groupby("soc_2010_code")["soc_2010_title"].first().str.endswith("(#)")
    assert (splits == marked).all() and int(splits.sum()) == 42
    merges = crosswalk.groupby("soc_2018_code")["soc_2010_code"].nunique() > 1
    assert (merges == crosswalk.groupby("soc_2018_code")["soc_2018_title"].first().str.endswith("(##)")).all() and int(merges.sum()) == 31


def test_exposure_task_ids_are_integers(source_dir):
    labels = exposure.read_full_labelset(source_dir / exposure.FULL_LABELSET)
    assert str(labels["task_id"].dtype) == "Int64"
    assert labels["task_id"].min() == 1 and labels["task_id"].max() == 23_955
    assert labels["human_exposure"].value_counts().to_dict() == {"E0": 10_256, "E2": 6_147, "E1": 2_862}


def test_workbank_duplicates_dropped_and_counted(source_dir):
    experts = workbank.read_expert_ratings(source_dir / workbank.EXPERT_RATINGS)
    assert experts.attrs["exact_duplicates_dropped"] == 19
    assert experts["task_id"].nunique() == 846
    workers = workbank.read_worker_desires(source_dir / workbank.WORKER_DESIRES)
    assert workers.attrs["exact_duplicates_dropped"] == 0
    assert workers["task_id"].nunique() == 844


def test_time_shares_sum_to_seven_hours(source_dir):
    shares = timeshare.read_time_shares(source_dir / timeshare.TIME_SHARES)
    totals = shares.groupby("onet_soc_code")["hours_per_day"].sum()
    assert shares["onet_soc_code"].nunique() == 876
    assert ((totals - 7).abs() < 1e-6).mean() > 0.99


def test_benchmarks_total_7702_prompts(source_dir):
    files = slug_files(source_dir / "benchmarks", ".jsonl")
    assert len(files) == 24
    total = sum(len(read_benchmark_prompts(path)) for path in files.values())
    assert total == 7_702


def test_results_parse(source_dir):
    rows = 0
    for path in sorted((source_dir / "results").glob("*.csv")):
        frame = read_benchmark_results(path, path.stem)
        assert frame["score"].between(0, 1).all()
        rows += len(frame)
    assert rows == 39_354


# --- bad input: one or more bad files per source, each error naming file, line/column and expectation ---


def _copy(source_dir: Path, relative: str, tmp_path: Path) -> Path:
    target = tmp_path / Path(relative).name
    shutil.copy(source_dir / relative, target)
    return target


def _edit_text(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"fixture: {old!r} not in {path.name}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _replace_line(path: Path, line: int, new: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[line - 1] = new
    path.write_text("".join(lines), encoding="utf-8")


def _field_on_line(path: Path, line: int, column_index: int, value: str, sep: str) -> None:
    """Set one field of one physical line, parsing the line as CSV (quoted commas) or TSV."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fields = next(csv.reader([lines[line - 1].rstrip("\r\n")], delimiter=sep))
    fields[column_index] = value
    out = io.StringIO()
    csv.writer(out, delimiter=sep, lineterminator="\n").writerow(fields)
    lines[line - 1] = out.getvalue()
    path.write_text("".join(lines), encoding="utf-8")


def _expect(call, *fragments: str) -> SourceFormatError:
    with pytest.raises(SourceFormatError) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in: {message}"
    return info.value


def test_bad_task_statements_renamed_column(source_dir, tmp_path):
    path = _copy(source_dir, onet.TASK_STATEMENTS, tmp_path)
    _edit_text(path, "Task ID", "TaskID")
    _expect(lambda: onet.read_task_statements(path), path.name, "'Task ID'", "missing column")


def test_bad_task_statements_float_id(source_dir, tmp_path):
    path = _copy(source_dir, onet.TASK_STATEMENTS, tmp_path)
    _field_on_line(path, 5, 2, "88x3", "\t")
    error = _expect(lambda: onet.read_task_statements(path), f"{path.name}:5", "'Task ID'", "whole number", "88x3")
    assert error.line == 5


def test_bad_task_statements_duplicate_id(source_dir, tmp_path):
    path = _copy(source_dir, onet.TASK_STATEMENTS, tmp_path)
    first_id = path.read_text().splitlines()[1].split("\t")[2]
    _field_on_line(path, 3, 2, first_id, "\t")
    _expect(lambda: onet.read_task_statements(path), "duplicate key", "lines 2 and 3")


def test_bad_task_statements_soc_code(source_dir, tmp_path):
    path = _copy(source_dir, onet.TASK_STATEMENTS, tmp_path)
    _field_on_line(path, 7, 0, "11-1011", "\t")
    _expect(lambda: onet.read_task_statements(path), ":7", "'O*NET-SOC Code'", "badly formed")


def _edit_xlsx(source_dir: Path, relative: str, tmp_path: Path, cells: dict[str, object], rows: int = 50) -> Path:
    """A copy of a workbook's first `rows` rows (same file and sheet name) with some cells set, e.g. {"C5": "x"};
    a value may be a function of the sheet. Small, because writing a 56,560-row workbook takes 10 s."""
    import openpyxl

    source = openpyxl.load_workbook(source_dir / relative, read_only=True)
    try:
        original = source.worksheets[0]
        book = openpyxl.Workbook()
        sheet = book.active
        sheet.title = original.title
        for row in original.iter_rows(max_row=rows, values_only=True):
            sheet.append(row)
    finally:
        source.close()
    for cell, value in cells.items():
        sheet[cell] = value(sheet) if callable(value) else value
    target = tmp_path / Path(relative).name
    book.save(target)
    return target


def test_bad_alternate_titles_renamed_column(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.ALTERNATE_TITLES, tmp_path, {"C1": "Alt Title"})
    _expect(lambda: onet.read_alternate_titles(path), path.name, "'Alternate Title'", "missing column")


def test_bad_alternate_titles_duplicate_key(source_dir, tmp_path):
    # Row 4 becomes row 3 again (same code, alternate title and short title).
    path = _edit_xlsx(source_dir, onet.ALTERNATE_TITLES, tmp_path, {"C4": lambda ws: ws["C3"].value, "D4": lambda ws: ws["D3"].value})
    error = _expect(
        lambda: onet.read_alternate_titles(path),
        path.name, "Alternate Titles!4", "'onet_soc_code'", "duplicate key", "lines Alternate Titles!3 and Alternate Titles!4",
    )
    assert error.line == "Alternate Titles!4"


def test_bad_alternate_titles_sources(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.ALTERNATE_TITLES, tmp_path, {"E12": "04;06"})
    _expect(lambda: onet.read_alternate_titles(path), f"{path.name}:Alternate Titles!12", "'Source(s)'", "badly formed", "04;06")


def test_bad_reported_titles_yes_no(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.REPORTED_TITLES, tmp_path, {"D6": "Yes"})
    error = _expect(
        lambda: onet.read_reported_titles(path),
        f"{path.name}:Sample of Reported Titles!6", "'Shown in My Next Move'", "['Y', 'N']", "'Yes'",
    )
    assert error.line == "Sample of Reported Titles!6"


def test_bad_reported_titles_empty_flag(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.REPORTED_TITLES, tmp_path, {"D8": None})
    _expect(lambda: onet.read_reported_titles(path), f"{path.name}:Sample of Reported Titles!8", "'Shown in My Next Move'", "empty value")


def test_bad_technology_skills_soc_code(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.TECHNOLOGY_SKILLS, tmp_path, {"A9": "15-1252"})
    _expect(lambda: onet.read_technology_skills(path), f"{path.name}:Technology Skills!9", "'O*NET-SOC Code'", "badly formed", "15-1252")


def test_bad_technology_skills_hot_flag(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.TECHNOLOGY_SKILLS, tmp_path, {"F15": "X"})
    _expect(lambda: onet.read_technology_skills(path), f"{path.name}:Technology Skills!15", "'Hot Technology'", "['Y', 'N']", "'X'")


def test_bad_technology_skills_commodity_code(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.TECHNOLOGY_SKILLS, tmp_path, {"D20": "4323220x"})
    _expect(lambda: onet.read_technology_skills(path), f"{path.name}:Technology Skills!20", "'Commodity Code'", "whole number", "4323220x")


def test_bad_related_occupations_unknown_tier(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.RELATED_OCCUPATIONS, tmp_path, {"E10": "Secondary"})
    _expect(
        lambda: onet.read_related_occupations(path),
        f"{path.name}:Related Occupations!10", "'Relatedness Tier'", "['Primary-Short', 'Primary-Long', 'Supplemental']", "'Secondary'",
    )


def test_bad_related_occupations_index_out_of_range(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.RELATED_OCCUPATIONS, tmp_path, {"F7": 21})
    _expect(lambda: onet.read_related_occupations(path), f"{path.name}:Related Occupations!7", "'Index'", "[1, 20]", "21")


def test_bad_related_occupations_duplicate_neighbour(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.RELATED_OCCUPATIONS, tmp_path, {"C5": lambda ws: ws["C2"].value})
    _expect(
        lambda: onet.read_related_occupations(path),
        f"{path.name}:Related Occupations!5", "duplicate key", "lines Related Occupations!2 and Related Occupations!5",
    )


def test_bad_task_dwas_task_id(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.TASK_DWAS, tmp_path, {"C5": "20461a"})
    error = _expect(lambda: onet.read_task_dwas(path), f"{path.name}:Tasks to DWAs!5", "'Task ID'", "whole number", "20461a")
    assert error.column == "Task ID"


def test_bad_task_dwas_dwa_id(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.TASK_DWAS, tmp_path, {"E11": "4.A.2.a.4.I09"})
    _expect(lambda: onet.read_task_dwas(path), f"{path.name}:Tasks to DWAs!11", "'DWA ID'", "badly formed", "4.A.2.a.4.I09")


def test_bad_dwa_reference_duplicate_dwa(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.DWA_REFERENCE, tmp_path, {"E3": lambda ws: ws["E2"].value})
    _expect(
        lambda: onet.read_dwa_reference(path),
        f"{path.name}:DWA Reference!3", "'dwa_id'", "duplicate key", "lines DWA Reference!2 and DWA Reference!3",
    )


def test_bad_dwa_reference_renamed_column(source_dir, tmp_path):
    path = _edit_xlsx(source_dir, onet.DWA_REFERENCE, tmp_path, {"C1": "IWA"})
    _expect(lambda: onet.read_dwa_reference(path), path.name, "'IWA ID'", "missing column")


def test_bad_dwa_reference_missing_sheet(source_dir, tmp_path):
    import openpyxl

    path = _edit_xlsx(source_dir, onet.DWA_REFERENCE, tmp_path, {})
    book = openpyxl.load_workbook(path)
    book.worksheets[0].title = "Sheet1"
    book.save(path)
    _expect(lambda: onet.read_dwa_reference(path), path.name, "sheet 'DWA Reference'")


def test_bad_occupations_empty_file(tmp_path):
    path = tmp_path / "occupation_data_29_3.tsv"
    path.write_bytes(b"")
    _expect(lambda: onet.read_occupations(path), path.name, "empty")


def test_bad_importance_out_of_range(source_dir, tmp_path):
    path = _copy(source_dir, onet.IMPORTANCE, tmp_path)
    _field_on_line(path, 10, 4, "7.5", ",")
    _expect(lambda: onet.read_importance(path), ":10", "'Data Value'", "[1.0, 5.0]")


def test_bad_importance_wrong_scale(source_dir, tmp_path):
    path = _copy(source_dir, onet.IMPORTANCE, tmp_path)
    _field_on_line(path, 4, 2, "RT", ",")
    _expect(lambda: onet.read_importance(path), ":4", "'Scale ID'", "['IM']")


def test_bad_oews_unknown_symbol(source_dir, tmp_path):
    path = _copy(source_dir, bls.OEWS_NATIONAL, tmp_path)
    _field_on_line(path, 20, 17, "~", ",")
    _expect(lambda: bls.read_oews_national(path), ":20", "'H_MEAN'", "known BLS symbol", "'~'")


def test_bad_oews_topcode_in_employment(source_dir, tmp_path):
    path = _copy(source_dir, bls.OEWS_NATIONAL, tmp_path)
    _field_on_line(path, 30, 11, "#", ",")
    _expect(lambda: bls.read_oews_national(path), ":30", "'TOT_EMP'", "no top code")


def test_bad_oews_group(source_dir, tmp_path):
    path = _copy(source_dir, bls.OEWS_NATIONAL, tmp_path)
    _field_on_line(path, 12, 10, "detail", ",")
    _expect(lambda: bls.read_oews_national(path), ":12", "'O_GROUP'", "one of")


def test_bad_soc_groups_too_few(source_dir, tmp_path):
    path = _copy(source_dir, bls.SOC_MAJOR_GROUPS, tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:5]))
    _expect(lambda: bls.read_soc_major_groups(path), "only 4 major groups")


def test_bad_crosswalk_truncated_xlsx(source_dir, tmp_path):
    path = _copy(source_dir, bls.ONET_OEWS_CROSSWALK, tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    _expect(lambda: bls.read_onet_oews_crosswalk(path), path.name, "not a readable .xlsx")


def test_bad_crosswalk_renamed_column(source_dir, tmp_path):
    source = source_dir / bls.ONET_OEWS_CROSSWALK
    frame = pd.read_excel(source, sheet_name=None, header=None)
    sheet = frame["ONET to SOC crosswalk"]
    sheet.iloc[4] = sheet.iloc[4].replace("NEM Code", "NEM")
    path = tmp_path / "crosswalk.xlsx"
    with pd.ExcelWriter(path) as writer:
        sheet.to_excel(writer, sheet_name="ONET to SOC crosswalk", header=False, index=False)
    _expect(lambda: bls.read_onet_oews_crosswalk(path), "'NEM Code'", "missing column")


def test_bad_soc_crosswalk_malformed_code(source_dir, tmp_path):
    path = _copy(source_dir, bls.SOC_2010_2018_CROSSWALK, tmp_path)
    _field_on_line(path, 12, 2, "15-11320", ",")
    error = _expect(lambda: bls.read_soc_2010_2018_crosswalk(path), f"{path.name}:12", "'2018 SOC Code'", "badly formed", "15-11320")
    assert error.line == 12 and error.column == "2018 SOC Code"


def test_bad_soc_crosswalk_duplicate_pair(source_dir, tmp_path):
    path = _copy(source_dir, bls.SOC_2010_2018_CROSSWALK, tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    _replace_line(path, 4, lines[2])
    _expect(lambda: bls.read_soc_2010_2018_crosswalk(path), f"{path.name}:4", "duplicate key", "lines 3 and 4")


def test_bad_soc_crosswalk_two_titles(source_dir, tmp_path):
    path = _copy(source_dir, bls.SOC_2010_2018_CROSSWALK, tmp_path)
    _field_on_line(path, 9, 1, "Public Relations Managers", ",")  # line 8 calls 11-2031 'Public Relations and Fundraising Managers (#)'
    _expect(lambda: bls.read_soc_2010_2018_crosswalk(path), f"{path.name}:9", "'2010 SOC Title'", "11-2031 has two titles")


def test_bad_exposure_label(source_dir, tmp_path):
    path = _copy(source_dir, exposure.FULL_LABELSET, tmp_path)
    _field_on_line(path, 8, 6, "E3", "\t")
    _expect(lambda: exposure.read_full_labelset(path), ":8", "'human_exposure_agg'", "E0", "E3")


def test_bad_exposure_fractional_task_id(source_dir, tmp_path):
    path = _copy(source_dir, exposure.FULL_LABELSET, tmp_path)
    _field_on_line(path, 3, 2, "8831.5", "\t")
    _expect(lambda: exposure.read_full_labelset(path), ":3", "'Task ID'", "8831.5")


def test_bad_occ_level_wrong_field_count(source_dir, tmp_path):
    path = _copy(source_dir, exposure.OCC_LEVEL, tmp_path)
    _replace_line(path, 6, "11-1021.00,General and Operations Managers,0.1\n")
    _expect(lambda: exposure.read_occ_level(path), ":6", "wrong number of fields")


def test_bad_time_shares_negative_hours(source_dir, tmp_path):
    frame = pd.read_excel(source_dir / timeshare.TIME_SHARES)
    frame.loc[41, timeshare.HOURS_COLUMN] = -1.0
    path = tmp_path / "task_time_share_estimates.xlsx"
    frame.to_excel(path, index=False)
    _expect(lambda: timeshare.read_time_shares(path), "xlsx:43", "Time spent per day", "range")


def test_bad_time_shares_not_a_workbook(tmp_path):
    path = tmp_path / "task_time_share_estimates.xlsx"
    path.write_text("Task ID,Task Name\n1,x\n")
    _expect(lambda: timeshare.read_time_shares(path), path.name, "not a readable .xlsx")


def test_bad_worker_desires_non_utf8(source_dir, tmp_path):
    path = _copy(source_dir, workbank.WORKER_DESIRES, tmp_path)
    data = bytearray(path.read_bytes())
    third_line = data.index(b"\n", data.index(b"\n") + 1) + 1
    data[third_line + 2 : third_line + 3] = b"\xff"
    path.write_bytes(bytes(data))
    _expect(lambda: workbank.read_worker_desires(path), f"{path.name}:3", "not UTF-8")


def test_bad_worker_desires_rating(source_dir, tmp_path):
    path = _copy(source_dir, workbank.WORKER_DESIRES, tmp_path)
    _field_on_line(path, 9, 6, "six", ",")
    _expect(lambda: workbank.read_worker_desires(path), ":9", "'Automation Desire Rating'", "six")


def test_bad_expert_agency_level(source_dir, tmp_path):
    path = _copy(source_dir, workbank.EXPERT_RATINGS, tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    fields = lines[4].rstrip("\n").rsplit(",", 1)
    lines[4] = fields[0] + ",9\n"
    path.write_text("".join(lines))
    _expect(lambda: workbank.read_expert_ratings(path), ":5", "Human Agency Scale", "H1-H5")


def test_bad_task_metadata_duplicate_task(source_dir, tmp_path):
    path = _copy(source_dir, workbank.TASK_METADATA, tmp_path)
    frame = pd.read_csv(path)
    frame.loc[5, "Task"] = frame.loc[5, "Task"] + " (edited)"
    frame.loc[5, "Task ID"] = frame.loc[4, "Task ID"]
    frame.to_csv(path, index=False)
    _expect(lambda: workbank.read_task_metadata(path), "duplicate key", "lines 6 and 7")


def _small_benchmark(tmp_path: Path, lines: list[str], slug: str = "tiny") -> Path:
    path = tmp_path / f"{slug}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _line(prompt_id: str, prompt: str, slug: str = "tiny") -> str:
    return json.dumps({"benchmark": slug, "prompt_id": prompt_id, "prompt": prompt})


def test_bad_benchmark_broken_json_line(tmp_path):
    path = _small_benchmark(tmp_path, [_line("a", "Write a memo."), '{"benchmark": "tiny", "prompt_id": "b", "prompt": "x"', _line("c", "Plan a budget.")])
    _expect(lambda: read_benchmark_prompts(path), "tiny.jsonl:2", "not valid JSON")


def test_bad_benchmark_duplicate_prompt_id(tmp_path):
    path = _small_benchmark(tmp_path, [_line("a", "Write a memo."), _line("b", "Plan."), _line("a", "Again.")])
    _expect(lambda: read_benchmark_prompts(path), "tiny.jsonl:3", "duplicate prompt_id 'a'", "lines 1 and 3")


def test_bad_benchmark_empty_prompt(tmp_path):
    path = _small_benchmark(tmp_path, [_line("a", "Write a memo."), _line("b", "   ")])
    _expect(lambda: read_benchmark_prompts(path), "tiny.jsonl:2", "'prompt'", "empty")


def test_bad_benchmark_missing_field(tmp_path):
    path = _small_benchmark(tmp_path, [json.dumps({"benchmark": "tiny", "prompt": "x"})])
    _expect(lambda: read_benchmark_prompts(path), "tiny.jsonl:1", "'prompt_id'", "missing field")


def test_bad_benchmark_name_mismatch(tmp_path):
    path = _small_benchmark(tmp_path, [_line("a", "Write a memo.", slug="other")])
    _expect(lambda: read_benchmark_prompts(path), "tiny.jsonl:1", "'benchmark'", "does not match")


def test_bad_benchmark_unsafe_slug(tmp_path):
    path = tmp_path / "Bad Name;drop.jsonl"
    path.write_text(_line("a", "x", slug="Bad Name;drop") + "\n")
    _expect(lambda: read_benchmark_prompts(path), "unsafe benchmark slug")
    _expect(lambda: check_slug("../etc", "partition"), "unsafe benchmark slug")
    _expect(lambda: slug_files(tmp_path, ".jsonl"), "Bad Name;drop.jsonl", "unsafe benchmark slug", SLUG_PATTERN.pattern)


def test_bad_benchmark_empty_file(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("")
    _expect(lambda: read_benchmark_prompts(path), "tiny.jsonl", "empty")


def test_bad_results_score_out_of_range(source_dir, tmp_path):
    path = _copy(source_dir, "results/cybench.csv", tmp_path)
    _field_on_line(path, 4, 3, "1.5", ",")
    _expect(lambda: read_benchmark_results(path, "cybench"), ":4", "'score'", "[0.0, 1.0]")


def test_bad_results_duplicate_model_prompt(source_dir, tmp_path):
    path = _copy(source_dir, "results/cybench.csv", tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines + [lines[2]]))
    _expect(lambda: read_benchmark_results(path, "cybench"), "duplicate key", f"lines 3 and {len(lines) + 1}")


def test_bad_results_missing_score_column(source_dir, tmp_path):
    path = _copy(source_dir, "results/cybench.csv", tmp_path)
    _edit_text(path, ",score,", ",points,")
    _expect(lambda: read_benchmark_results(path, "cybench"), "'score'", "missing column")
