"""O*NET 29.3: task statements, occupations, task importance (IM), Dingel–Neiman teleworkability; alternate
and reported job titles, technology skills, related occupations, tasks to DWAs and the DWA reference.

The six workbooks of the last group are byte copies of the O*NET 29.3 Excel edition (onet/SOURCES.md),
read from their one sheet, so a bad cell is reported as ``file:Sheet!row``. Alternate Titles lists two
titles of 21-1014.00 twice, once without and once with a short title (and different sources); both rows
are kept, the key includes the short title, and the count is in ``attrs["titles_listed_twice"]``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .validate import (
    ONET_SOC_PATTERN,
    SOC_PATTERN,
    SourceFormatError,
    _line,
    check_row_count,
    check_unique,
    read_delimited,
    read_xlsx,
    require_columns,
    to_choice,
    to_float,
    to_int,
    to_text,
)

TASK_STATEMENTS = "onet/task_statements_29_3.tsv"
OCCUPATIONS = "onet/occupation_data_29_3.tsv"
IMPORTANCE = "onet/task_ratings_IM_only_db_29.csv"
TELEWORK = "onet/dingel_neiman/occupations_workathome.csv"
ALTERNATE_TITLES = "onet/db_29_3_excel/Alternate Titles.xlsx"
REPORTED_TITLES = "onet/db_29_3_excel/Sample of Reported Titles.xlsx"
TECHNOLOGY_SKILLS = "onet/db_29_3_excel/Technology Skills.xlsx"
RELATED_OCCUPATIONS = "onet/db_29_3_excel/Related Occupations.xlsx"
TASK_DWAS = "onet/db_29_3_excel/Tasks to DWAs.xlsx"
DWA_REFERENCE = "onet/db_29_3_excel/DWA Reference.xlsx"

RELATEDNESS_TIERS = ["Primary-Short", "Primary-Long", "Supplemental"]
# Content Model IDs of the work activities: element 4.A.2.a.4, IWA 4.A.2.a.4.I09, DWA 4.A.2.a.4.I09.D03.
ELEMENT_ID_PATTERN = r"^4\.A\.\d\.[a-z]\.\d+$"
IWA_ID_PATTERN = r"^4\.A\.\d\.[a-z]\.\d+\.I\d{2}$"
DWA_ID_PATTERN = r"^4\.A\.\d\.[a-z]\.\d+\.I\d{2}\.D\d{2}$"
MONTH_PATTERN = r"^\d{2}/\d{4}$"


def read_task_statements(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, "\t")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Task ID", "Task", "Task Type", "Incumbents Responding", "Date", "Domain Source"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "task_id": to_int(raw, "Task ID", path),
            "task": to_text(raw, "Task", path),
            # Analyst-written tasks have no type in the Excel edition: NULL, never a guess.
            "task_type": to_choice(raw, "Task Type", path, ["Core", "Supplemental"], nullable=True),
            "incumbents_responding": to_int(raw, "Incumbents Responding", path, nullable=True),
            "rating_date": to_text(raw, "Date", path, nullable=True),
            "domain_source": to_text(raw, "Domain Source", path),
        }
    )
    check_unique(frame, ["task_id"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="tasks")
    return frame


def read_occupations(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, "\t")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Description"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "description": to_text(raw, "Description", path, nullable=True),
        }
    )
    check_unique(frame, ["onet_soc_code"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="occupations")
    return frame


def read_importance(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["O*NET-SOC Code", "Task ID", "Scale ID", "Data Value", "N", "Date", "Domain Source"])
    to_choice(raw, "Scale ID", path, ["IM"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "task_id": to_int(raw, "Task ID", path),
            "importance": to_float(raw, "Data Value", path, low=1.0, high=5.0),
            "n_respondents": to_int(raw, "N", path, nullable=True),
            "rating_date": to_text(raw, "Date", path, nullable=True),
            "domain_source": to_text(raw, "Domain Source", path),
        }
    )
    check_unique(frame, ["onet_soc_code", "task_id"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="ratings")
    return frame


def read_telework(path: Path) -> pd.DataFrame:
    """Dingel & Neiman (2020) teleworkability by O*NET-SOC code (O*NET-SOC 2010 taxonomy)."""
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["onetsoccode", "title", "teleworkable"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "onetsoccode", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "title", path),
            "teleworkable": to_float(raw, "teleworkable", path, low=0.0, high=1.0),
        }
    )
    check_unique(frame, ["onet_soc_code"], path, source=raw)
    return frame


def _yes_no(raw: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """A Y/N flag as a boolean; anything else, an empty cell included, fails naming the cell."""
    return pd.array([value == "Y" for value in to_choice(raw, column, path, ["Y", "N"])], dtype="boolean")


def _check_int_range(values: pd.Series, raw: pd.DataFrame, column: str, path: Path, low: int, high: int) -> None:
    bad = ~pd.Series(values).between(low, high)
    if bad.any():
        position = int(bad.to_numpy().nonzero()[0][0])
        raise SourceFormatError(
            path,
            "number out of range",
            line=_line(raw, position),
            column=column,
            expected=f"a whole number in [{low}, {high}]",
            found=int(values[position]),
        )


def read_alternate_titles(path: Path) -> pd.DataFrame:
    """Lay and industry titles per occupation; Short Title is mostly empty (NULL), Source(s) a code list such as '04,06'."""
    raw = read_xlsx(path, sheet="Alternate Titles")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Alternate Title", "Short Title", "Source(s)"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "alternate_title": to_text(raw, "Alternate Title", path),
            "short_title": to_text(raw, "Short Title", path, nullable=True),
            "sources": to_text(raw, "Source(s)", path, pattern=r"^\d{2}(,\d{2})*$"),
        }
    )
    # (code, alternate title) repeats where O*NET lists a title with and without its short title.
    check_unique(frame, ["onet_soc_code", "alternate_title", "short_title"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="alternate titles")
    frame.attrs["titles_listed_twice"] = int(frame.duplicated(["onet_soc_code", "alternate_title"]).sum())
    return frame


def read_reported_titles(path: Path) -> pd.DataFrame:
    """Job titles incumbents reported in O*NET surveys; Shown in My Next Move is Y/N."""
    raw = read_xlsx(path, sheet="Sample of Reported Titles")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Reported Job Title", "Shown in My Next Move"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "reported_title": to_text(raw, "Reported Job Title", path),
            "shown_in_my_next_move": _yes_no(raw, "Shown in My Next Move", path),
        }
    )
    check_unique(frame, ["onet_soc_code", "reported_title"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="reported titles")
    return frame


def read_technology_skills(path: Path) -> pd.DataFrame:
    """Software and technology examples per occupation with their UNSPSC commodity; Hot Technology and In Demand are Y/N."""
    raw = read_xlsx(path, sheet="Technology Skills")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Example", "Commodity Code", "Commodity Title", "Hot Technology", "In Demand"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "example": to_text(raw, "Example", path),
            "commodity_code": to_int(raw, "Commodity Code", path),
            "commodity_title": to_text(raw, "Commodity Title", path),
            "hot_technology": _yes_no(raw, "Hot Technology", path),
            "in_demand": _yes_no(raw, "In Demand", path),
        }
    )
    check_unique(frame, ["onet_soc_code", "example", "commodity_code"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="technology examples")
    return frame


def read_related_occupations(path: Path) -> pd.DataFrame:
    """O*NET's 20 neighbours per occupation, ranked 1-20 (Index) within tiers Primary-Short, Primary-Long, Supplemental."""
    raw = read_xlsx(path, sheet="Related Occupations")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Related O*NET-SOC Code", "Related Title", "Relatedness Tier", "Index"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "related_onet_soc_code": to_text(raw, "Related O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "related_title": to_text(raw, "Related Title", path),
            "relatedness_tier": to_choice(raw, "Relatedness Tier", path, RELATEDNESS_TIERS),
            "related_index": to_int(raw, "Index", path),
        }
    )
    _check_int_range(frame["related_index"], raw, "Index", path, 1, 20)
    check_unique(frame, ["onet_soc_code", "related_onet_soc_code"], path, source=raw)
    check_unique(frame, ["onet_soc_code", "related_index"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="related occupations")
    return frame


def read_task_dwas(path: Path) -> pd.DataFrame:
    """Which detailed work activities (DWAs) each task statement performs; Date is MM/YYYY."""
    raw = read_xlsx(path, sheet="Tasks to DWAs")
    require_columns(raw, path, ["O*NET-SOC Code", "Title", "Task ID", "Task", "DWA ID", "DWA Title", "Date", "Domain Source"])
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "title": to_text(raw, "Title", path),
            "task_id": to_int(raw, "Task ID", path),
            "task": to_text(raw, "Task", path),
            "dwa_id": to_text(raw, "DWA ID", path, pattern=DWA_ID_PATTERN),
            "dwa_title": to_text(raw, "DWA Title", path),
            "rating_date": to_text(raw, "Date", path, pattern=MONTH_PATTERN),
            "domain_source": to_text(raw, "Domain Source", path),
        }
    )
    check_unique(frame, ["onet_soc_code", "task_id", "dwa_id"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="task-DWA links")
    return frame


def read_dwa_reference(path: Path) -> pd.DataFrame:
    """The DWA hierarchy: work activity element > intermediate work activity (IWA) > detailed work activity (DWA)."""
    raw = read_xlsx(path, sheet="DWA Reference")
    require_columns(raw, path, ["Element ID", "Element Name", "IWA ID", "IWA Title", "DWA ID", "DWA Title"])
    frame = pd.DataFrame(
        {
            "element_id": to_text(raw, "Element ID", path, pattern=ELEMENT_ID_PATTERN),
            "element_name": to_text(raw, "Element Name", path),
            "iwa_id": to_text(raw, "IWA ID", path, pattern=IWA_ID_PATTERN),
            "iwa_title": to_text(raw, "IWA Title", path),
            "dwa_id": to_text(raw, "DWA ID", path, pattern=DWA_ID_PATTERN),
            "dwa_title": to_text(raw, "DWA Title", path),
        }
    )
    check_unique(frame, ["dwa_id"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="DWAs")
    return frame


__all__ = [
    "read_task_statements",
    "read_occupations",
    "read_importance",
    "read_telework",
    "read_alternate_titles",
    "read_reported_titles",
    "read_technology_skills",
    "read_related_occupations",
    "read_task_dwas",
    "read_dwa_reference",
    "SOC_PATTERN",
]
