"""BLS: OEWS May 2024 national estimates, SOC 2018 major groups, O*NET-SOC → NEM (OEWS) crosswalk, SOC 2010 → 2018 crosswalk."""

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
    col,
    read_delimited,
    read_xlsx,
    require_columns,
    to_choice,
    to_text,
    typed_table,
)

OEWS_NATIONAL = "bls/oews/national_M2024_dl.csv"
SOC_MAJOR_GROUPS = "bls/soc/soc_2018_major_groups.csv"
ONET_OEWS_CROSSWALK = "bls/crosswalks/nem-onet-to-soc-crosswalk.xlsx"
SOC_2010_2018_CROSSWALK = "bls/crosswalks/soc_2010_to_2018_crosswalk.csv"

# OEWS May 2024 "Field Descriptions": '#' marks a wage at or above these top codes.
TOP_CODE_HOURLY = 115.00
TOP_CODE_ANNUAL = 239_200.0
WAGE_COLUMNS = {
    "H_MEAN": TOP_CODE_HOURLY,
    "A_MEAN": TOP_CODE_ANNUAL,
    "H_MEDIAN": TOP_CODE_HOURLY,
    "A_MEDIAN": TOP_CODE_ANNUAL,
}
O_GROUPS = ["total", "major", "minor", "broad", "detailed"]


def parse_bls_number(frame: pd.DataFrame, column: str, path: Path, *, top_code: float | None) -> tuple[pd.Series, pd.Series]:
    """Parse a BLS cell: numbers (thousands commas allowed); '*' / '**' → NULL; '#' → top code, flagged.

    Any other symbol is an error: BLS has used '~' and others in other releases, and a symbol we do
    not know the meaning of must not silently become a number or a NULL.
    """
    values: list[object] = []
    flags: list[bool] = []
    for position, cell in enumerate(frame[column].tolist()):
        text = "" if cell is None else str(cell).strip()
        if text in ("", "*", "**"):
            values.append(pd.NA)
            flags.append(False)
        elif text == "#":
            if top_code is None:
                raise SourceFormatError(
                    path, "top-code symbol '#' in a column that has no top code", line=_line(frame, position), column=column, expected="a number", found=text
                )
            values.append(top_code)
            flags.append(True)
        else:
            try:
                values.append(float(text.replace(",", "")))
            except ValueError:
                raise SourceFormatError(
                    path, "not a number or known BLS symbol", line=_line(frame, position), column=column, expected="a number, '*', '**' or '#'", found=text
                ) from None
            flags.append(False)
    return pd.array(values, dtype="Float64"), pd.array(flags, dtype="boolean")


def read_oews_national(path: Path) -> pd.DataFrame:
    raw = read_delimited(path, ",")
    require_columns(raw, path, ["OCC_CODE", "OCC_TITLE", "O_GROUP", "TOT_EMP", *WAGE_COLUMNS, "ANNUAL", "HOURLY"])
    frame = pd.DataFrame(
        {
            "occ_code": to_text(raw, "OCC_CODE", path, pattern=SOC_PATTERN),
            "occ_title": to_text(raw, "OCC_TITLE", path),
            "o_group": to_choice(raw, "O_GROUP", path, O_GROUPS),
        }
    )
    # Without a top code, parse_bls_number raises on '#', so employment is never flagged top-coded.
    frame["tot_emp"], _ = parse_bls_number(raw, "TOT_EMP", path, top_code=None)
    for column, top in WAGE_COLUMNS.items():
        values, flags = parse_bls_number(raw, column, path, top_code=top)
        frame[column.lower()] = values
        frame[f"{column.lower()}_topcoded"] = flags
    frame["annual_only"] = to_choice(raw, "ANNUAL", path, ["TRUE"], nullable=True).fillna("") == "TRUE"
    frame["hourly_only"] = to_choice(raw, "HOURLY", path, ["TRUE"], nullable=True).fillna("") == "TRUE"
    check_unique(frame, ["occ_code", "o_group"], path, source=raw)
    if not (frame["o_group"] == "detailed").any():
        raise SourceFormatError(path, "no detailed occupation rows", column="O_GROUP", expected="rows with O_GROUP = 'detailed'")
    return frame


def read_soc_major_groups(path: Path) -> pd.DataFrame:
    columns = {"family_code": col("soc_major_group_code", pattern=r"^\d{2}-0000$"), "family_title": col("soc_major_group_title")}
    return typed_table(read_delimited(path, ","), path, columns, unique=["family_code"], what="major groups", minimum=22)


def read_onet_oews_crosswalk(path: Path) -> pd.DataFrame:
    """Sheet 'ONET to SOC crosswalk': four banner rows, header on row 5."""
    raw = read_xlsx(path, sheet="ONET to SOC crosswalk", header_row=4)
    require_columns(raw, path, ["O*NET-SOC Code", "O*NET-SOC Title", "NEM Code", "National Employment Matrix Occupational Title"])
    raw = raw[~raw["O*NET-SOC Code"].isna()].copy()
    frame = pd.DataFrame(
        {
            "onet_soc_code": to_text(raw, "O*NET-SOC Code", path, pattern=ONET_SOC_PATTERN),
            "onet_soc_title": to_text(raw, "O*NET-SOC Title", path),
            "oews_code": to_text(raw, "NEM Code", path, pattern=SOC_PATTERN),
            "oews_title": to_text(raw, "National Employment Matrix Occupational Title", path),
        }
    )
    check_unique(frame, ["onet_soc_code"], path, source=raw)
    check_row_count(frame, path, minimum=1, what="crosswalk rows")
    return frame


def _check_one_title(frame: pd.DataFrame, code: str, title: str, column: str, path: Path, raw: pd.DataFrame) -> None:
    """A code listed on several rows must carry the same title on each; name the first row that differs."""
    first = frame.groupby(code, sort=False)[title].transform("first")
    differs = (frame[title] != first).to_numpy().nonzero()[0]
    if len(differs):
        position = int(differs[0])
        raise SourceFormatError(
            path,
            f"code {frame[code].iloc[position]} has two titles",
            line=_line(raw, position),
            column=column,
            expected=f"the title {first.iloc[position]!r} given on its first row",
            found=frame[title].iloc[position],
        )


def read_soc_2010_2018_crosswalk(path: Path) -> pd.DataFrame:
    """BLS SOC 2010 → SOC 2018 crosswalk, one row per (2010 code, 2018 code) pair (many-to-many).

    A 2010 code that was split lists each of its 2018 codes (its title marked `(#)`), a 2018 code formed
    from several 2010 codes is listed under each of them (its title marked `(##)`); the markers are kept
    as published. UTF-8 with a byte-order mark and CRLF line ends, as copied (bls/SOURCES.md).
    """
    raw = read_delimited(path, ",")
    columns = {
        "soc_2010_code": col("2010 SOC Code", pattern=SOC_PATTERN),
        "soc_2010_title": col("2010 SOC Title"),
        "soc_2018_code": col("2018 SOC Code", pattern=SOC_PATTERN),
        "soc_2018_title": col("2018 SOC Title"),
    }
    frame = typed_table(raw, path, columns, unique=["soc_2010_code", "soc_2018_code"], what=None)
    _check_one_title(frame, "soc_2010_code", "soc_2010_title", "2010 SOC Title", path, raw)
    _check_one_title(frame, "soc_2018_code", "soc_2018_title", "2018 SOC Title", path, raw)
    check_row_count(frame, path, minimum=1, what="crosswalk rows")
    frame.attrs["soc_2010_codes"] = int(frame["soc_2010_code"].nunique())
    frame.attrs["soc_2018_codes"] = int(frame["soc_2018_code"].nunique())
    return frame
