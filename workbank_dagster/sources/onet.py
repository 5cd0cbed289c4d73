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
    check_unique,
    col,
    read_delimited,
    read_xlsx,
    require_columns,
    to_choice,
    to_float,
    to_int,
    typed_table,
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


# The first two columns of most O*NET files: the occupation's code and title.
OCCUPATION = {"onet_soc_code": col("O*NET-SOC Code", pattern=ONET_SOC_PATTERN), "title": col("Title")}


def read_task_statements(path: Path) -> pd.DataFrame:
    columns = {
        **OCCUPATION,
        "task_id": col("Task ID", to_int),
        "task": col("Task"),
        # Analyst-written tasks have no type in the Excel edition: NULL, never a guess.
        "task_type": col("Task Type", to_choice, ["Core", "Supplemental"], nullable=True),
        "incumbents_responding": col("Incumbents Responding", to_int, nullable=True),
        "rating_date": col("Date", nullable=True),
        "domain_source": col("Domain Source"),
    }
    return typed_table(read_delimited(path, "\t"), path, columns, unique=["task_id"], what="tasks")


def read_occupations(path: Path) -> pd.DataFrame:
    columns = {**OCCUPATION, "description": col("Description", nullable=True)}
    return typed_table(read_delimited(path, "\t"), path, columns, unique=["onet_soc_code"], what="occupations")


def read_importance(path: Path) -> pd.DataFrame:
    """Task importance (scale IM, 1-5) by occupation and task."""
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["O*NET-SOC Code", "Task ID", "Scale ID", "Data Value", "N", "Date", "Domain Source"])
    to_choice(raw, "Scale ID", path, ["IM"])
    columns = {
        "onet_soc_code": OCCUPATION["onet_soc_code"],
        "task_id": col("Task ID", to_int),
        "importance": col("Data Value", to_float, low=1.0, high=5.0),
        "n_respondents": col("N", to_int, nullable=True),
        "rating_date": col("Date", nullable=True),
        "domain_source": col("Domain Source"),
    }
    return typed_table(raw, path, columns, unique=["onet_soc_code", "task_id"], what="ratings")


def read_telework(path: Path) -> pd.DataFrame:
    """Dingel & Neiman (2020) teleworkability by O*NET-SOC code (O*NET-SOC 2010 taxonomy)."""
    columns = {
        "onet_soc_code": col("onetsoccode", pattern=ONET_SOC_PATTERN),
        "title": col("title"),
        "teleworkable": col("teleworkable", to_float, low=0.0, high=1.0),
    }
    return typed_table(read_delimited(path, ","), path, columns, unique=["onet_soc_code"])


def _yes_no(raw: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """A Y/N flag as a boolean; anything else, an empty cell included, fails naming the cell."""
    return pd.array([value == "Y" for value in to_choice(raw, column, path, ["Y", "N"])], dtype="boolean")


def _int_in_range(raw: pd.DataFrame, column: str, path: Path, low: int, high: int) -> pd.Series:
    """Whole numbers in [low, high]; the first outside fails naming its cell."""
    values = to_int(raw, column, path)
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
    return values


def read_alternate_titles(path: Path) -> pd.DataFrame:
    """Lay and industry titles per occupation; Short Title is mostly empty (NULL), Source(s) a code list such as '04,06'."""
    columns = {
        **OCCUPATION,
        "alternate_title": col("Alternate Title"),
        "short_title": col("Short Title", nullable=True),
        "sources": col("Source(s)", pattern=r"^\d{2}(,\d{2})*$"),
    }
    # (code, alternate title) repeats where O*NET lists a title with and without its short title.
    unique = ["onet_soc_code", "alternate_title", "short_title"]
    frame = typed_table(read_xlsx(path, sheet="Alternate Titles"), path, columns, unique=unique, what="alternate titles")
    frame.attrs["titles_listed_twice"] = int(frame.duplicated(["onet_soc_code", "alternate_title"]).sum())
    return frame


def read_reported_titles(path: Path) -> pd.DataFrame:
    """Job titles incumbents reported in O*NET surveys; Shown in My Next Move is Y/N."""
    columns = {**OCCUPATION, "reported_title": col("Reported Job Title"), "shown_in_my_next_move": col("Shown in My Next Move", _yes_no)}
    raw = read_xlsx(path, sheet="Sample of Reported Titles")
    return typed_table(raw, path, columns, unique=["onet_soc_code", "reported_title"], what="reported titles")


def read_technology_skills(path: Path) -> pd.DataFrame:
    """Software and technology examples per occupation with their UNSPSC commodity; Hot Technology and In Demand are Y/N."""
    columns = {
        **OCCUPATION,
        "example": col("Example"),
        "commodity_code": col("Commodity Code", to_int),
        "commodity_title": col("Commodity Title"),
        "hot_technology": col("Hot Technology", _yes_no),
        "in_demand": col("In Demand", _yes_no),
    }
    raw = read_xlsx(path, sheet="Technology Skills")
    return typed_table(raw, path, columns, unique=["onet_soc_code", "example", "commodity_code"], what="technology examples")


def read_related_occupations(path: Path) -> pd.DataFrame:
    """O*NET's 20 neighbours per occupation, ranked 1-20 (Index) within tiers Primary-Short, Primary-Long, Supplemental."""
    columns = {
        **OCCUPATION,
        "related_onet_soc_code": col("Related O*NET-SOC Code", pattern=ONET_SOC_PATTERN),
        "related_title": col("Related Title"),
        "relatedness_tier": col("Relatedness Tier", to_choice, RELATEDNESS_TIERS),
        "related_index": col("Index", _int_in_range, 1, 20),
    }
    raw = read_xlsx(path, sheet="Related Occupations")
    frame = typed_table(raw, path, columns, unique=["onet_soc_code", "related_onet_soc_code"], what="related occupations")
    check_unique(frame, ["onet_soc_code", "related_index"], path, source=raw)
    return frame


def read_task_dwas(path: Path) -> pd.DataFrame:
    """Which detailed work activities (DWAs) each task statement performs; Date is MM/YYYY."""
    columns = {
        **OCCUPATION,
        "task_id": col("Task ID", to_int),
        "task": col("Task"),
        "dwa_id": col("DWA ID", pattern=DWA_ID_PATTERN),
        "dwa_title": col("DWA Title"),
        "rating_date": col("Date", pattern=MONTH_PATTERN),
        "domain_source": col("Domain Source"),
    }
    raw = read_xlsx(path, sheet="Tasks to DWAs")
    return typed_table(raw, path, columns, unique=["onet_soc_code", "task_id", "dwa_id"], what="task-DWA links")


def read_dwa_reference(path: Path) -> pd.DataFrame:
    """The DWA hierarchy: work activity element > intermediate work activity (IWA) > detailed work activity (DWA)."""
    columns = {
        "element_id": col("Element ID", pattern=ELEMENT_ID_PATTERN),
        "element_name": col("Element Name"),
        "iwa_id": col("IWA ID", pattern=IWA_ID_PATTERN),
        "iwa_title": col("IWA Title"),
        "dwa_id": col("DWA ID", pattern=DWA_ID_PATTERN),
        "dwa_title": col("DWA Title"),
    }
    return typed_table(read_xlsx(path, sheet="DWA Reference"), path, columns, unique=["dwa_id"], what="DWAs")


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
