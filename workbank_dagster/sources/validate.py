"""Reading and checking source files so that bad input fails with file, line, column and expectation.

Every parser in this package reads text as strings first and types each column here, so the first
bad value is reported where a person can find it: ``path:line: column 'X': expected …, found '…'``.
Line numbers count the header as line 1 (CSV/TSV/JSONL); spreadsheet rows are reported as
``sheet!row``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pandas as pd


class SourceFormatError(ValueError):
    """A source file does not have the shape the pipeline expects."""

    def __init__(
        self,
        path: Path | str,
        problem: str,
        *,
        line: int | str | None = None,
        column: str | None = None,
        expected: str | None = None,
        found: object = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.column = column
        self.expected = expected
        self.found = found
        where = self.path if line is None else f"{self.path}:{line}"
        parts = [where]
        if column is not None:
            parts.append(f"column {column!r}")
        parts.append(problem)
        message = ": ".join(parts)
        if expected is not None:
            message += f"; expected {expected}"
        if found is not None:
            shown = found if isinstance(found, str) else repr(found)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            message += f", found {shown!r}"
        super().__init__(message)


def require_file(path: Path) -> Path:
    if not path.is_file():
        raise SourceFormatError(path, "file not found")
    if path.stat().st_size == 0:
        raise SourceFormatError(path, "file is empty", expected="a header line and data rows")
    return path


def decode_utf8(path: Path, data: bytes | None = None) -> str:
    """Decode a file as UTF-8 (BOM tolerated); on failure name the line and byte offset."""
    raw = path.read_bytes() if data is None else data
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SourceFormatError(
            path,
            f"bytes that are not UTF-8 at byte {exc.start}",
            line=line,
            expected="UTF-8 text",
            found=raw[max(exc.start - 10, 0) : exc.start + 10],
        ) from None


def jsonl_objects(path: Path, text: str) -> Iterator[tuple[int, dict]]:
    """Each non-blank line of a JSON Lines text (of the file `path`) as (line number, its object); a
    line that is not valid JSON, or not a JSON object, is a SourceFormatError naming the file and line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SourceFormatError(path, f"not valid JSON ({exc.msg} at column {exc.colno})", line=number, expected="one JSON object per line") from None
        if not isinstance(record, dict):
            raise SourceFormatError(path, "not a JSON object", line=number, expected="one JSON object per line", found=type(record).__name__)
        yield number, record


def read_delimited(path: Path, sep: str, *, index_column_unnamed: bool = False) -> pd.DataFrame:
    """Read a CSV/TSV file as strings, every field kept verbatim (empty fields are '')."""
    require_file(path)
    text = decode_utf8(path)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise SourceFormatError(path, f"unreadable {sep!r}-separated text ({exc})", line=reader.line_num) from None
    if not rows or not any(field.strip() for field in rows[0]):
        raise SourceFormatError(path, "file has no header line", expected="a header line and data rows")
    header = rows[0]
    if index_column_unnamed and header and header[0] == "":
        header = ["_row_index", *header[1:]]
    body = rows[1:]
    # csv.reader numbers physical lines; fields never hold newlines in our sources, so row i is line i+2.
    for number, row in enumerate(body, start=2):
        if len(row) != len(header) and any(field.strip() for field in row):
            raise SourceFormatError(
                path,
                "wrong number of fields",
                line=number,
                expected=f"{len(header)} fields as in the header",
                found=f"{len(row)} fields",
            )
    body = [row for row in body if len(row) == len(header)]
    frame = pd.DataFrame(body, columns=header, dtype=object)
    frame.attrs["line_offset"] = 2
    return frame


def read_xlsx(path: Path, sheet: str | int = 0, header_row: int = 0) -> pd.DataFrame:
    """Read one sheet of a workbook with openpyxl; header_row is 0-based; values kept as objects."""
    require_file(path)
    try:
        frame = pd.read_excel(path, sheet_name=sheet, header=header_row, dtype=object, engine="openpyxl")
    except ValueError as exc:  # missing sheet
        raise SourceFormatError(path, f"cannot read sheet {sheet!r} ({exc})", expected=f"a sheet {sheet!r}") from None
    except Exception as exc:  # zipfile.BadZipFile, KeyError inside a truncated workbook, …
        raise SourceFormatError(
            path, f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})", expected="an Excel 2007+ workbook"
        ) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    # Row numbers as Excel shows them: header is row header_row+1, first data row header_row+2.
    frame.attrs["line_offset"] = header_row + 2
    frame.attrs["sheet"] = sheet
    return frame


def _line(frame: pd.DataFrame, position: int) -> int | str:
    """Line (or sheet!row) of the row at `position`; index labels survive filtering, so use them."""
    offset = frame.attrs.get("line_offset", 2)
    label = frame.index[position]
    line = offset + (int(label) if isinstance(label, (int,)) or hasattr(label, "__index__") else position)
    sheet = frame.attrs.get("sheet")
    return f"{sheet}!{line}" if isinstance(sheet, str) else line


def require_columns(frame: pd.DataFrame, path: Path, columns: Sequence[str]) -> None:
    present = set(frame.columns)
    missing = [c for c in columns if c not in present]
    if missing:
        raise SourceFormatError(
            path,
            f"missing column(s) {', '.join(repr(c) for c in missing)}",
            line=1 if "sheet" not in frame.attrs else None,
            column=missing[0],
            expected=f"columns {list(columns)}",
            found=f"columns {list(frame.columns)}",
        )


def _blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and value != value:
        return True
    return isinstance(value, str) and value.strip() == ""


_INT_RE = re.compile(r"^[+-]?\d+(\.0+)?$")


def to_int(frame: pd.DataFrame, column: str, path: Path, *, nullable: bool = False) -> pd.Series:
    """Whole numbers; '8823.0' is accepted (some sources store IDs as floats), '8823.5' is not."""
    out: list[object] = []
    for position, value in enumerate(frame[column].tolist()):
        if _blank(value):
            if nullable:
                out.append(pd.NA)
                continue
            raise SourceFormatError(path, "empty value", line=_line(frame, position), column=column, expected="a whole number")
        if isinstance(value, bool):
            raise SourceFormatError(path, "not a whole number", line=_line(frame, position), column=column, expected="a whole number", found=value)
        if isinstance(value, int):
            out.append(value)
            continue
        if isinstance(value, float):
            if value.is_integer():
                out.append(int(value))
                continue
            raise SourceFormatError(path, "not a whole number", line=_line(frame, position), column=column, expected="a whole number", found=value)
        text = str(value).strip()
        if not _INT_RE.match(text):
            raise SourceFormatError(path, "not a whole number", line=_line(frame, position), column=column, expected="a whole number", found=text)
        out.append(int(float(text)) if "." in text else int(text))
    return pd.array(out, dtype="Int64")


def to_float(
    frame: pd.DataFrame,
    column: str,
    path: Path,
    *,
    nullable: bool = False,
    low: float | None = None,
    high: float | None = None,
) -> pd.Series:
    out: list[object] = []
    for position, value in enumerate(frame[column].tolist()):
        if _blank(value):
            if nullable:
                out.append(pd.NA)
                continue
            raise SourceFormatError(path, "empty value", line=_line(frame, position), column=column, expected="a number")
        try:
            number = float(str(value).strip()) if not isinstance(value, (int, float)) or isinstance(value, bool) else float(value)
            if isinstance(value, bool):
                raise ValueError
        except ValueError:
            raise SourceFormatError(path, "not a number", line=_line(frame, position), column=column, expected="a number", found=value) from None
        if number != number or (low is not None and number < low) or (high is not None and number > high):
            raise SourceFormatError(
                path, "number out of range", line=_line(frame, position), column=column, expected=f"a number in [{low}, {high}]", found=value
            )
        out.append(number)
    return pd.array(out, dtype="Float64")


def to_text(frame: pd.DataFrame, column: str, path: Path, *, nullable: bool = False, pattern: str | None = None) -> pd.Series:
    regex = re.compile(pattern) if pattern else None
    out: list[object] = []
    for position, value in enumerate(frame[column].tolist()):
        if _blank(value):
            if nullable:
                out.append(pd.NA)
                continue
            raise SourceFormatError(path, "empty value", line=_line(frame, position), column=column, expected="text")
        text = str(value).strip() if not isinstance(value, str) else value.strip()
        if regex is not None and not regex.match(text):
            raise SourceFormatError(path, "badly formed value", line=_line(frame, position), column=column, expected=f"text matching {pattern}", found=text)
        out.append(text)
    return pd.array(out, dtype="string")


def to_choice(frame: pd.DataFrame, column: str, path: Path, allowed: Sequence[str], *, nullable: bool = False) -> pd.Series:
    values = to_text(frame, column, path, nullable=nullable)
    allowed_set = set(allowed)
    for position, value in enumerate(values):
        if value is pd.NA:
            continue
        if value not in allowed_set:
            raise SourceFormatError(
                path, "value not allowed", line=_line(frame, position), column=column, expected=f"one of {list(allowed)}", found=value
            )
    return values


ONET_SOC_PATTERN = r"^\d{2}-\d{4}\.\d{2}$"
SOC_PATTERN = r"^\d{2}-\d{4}$"


def check_unique(frame: pd.DataFrame, keys: Sequence[str], path: Path, *, source: pd.DataFrame | None = None) -> None:
    """Raise on the first repeated key, naming both lines. `source` supplies line numbering."""
    numbering = source if source is not None else frame
    duplicated = frame.duplicated(list(keys), keep=False)
    if duplicated.any():
        positions = [i for i, flag in enumerate(duplicated.tolist()) if flag]
        first = frame.iloc[positions[0]][list(keys)].tolist()
        same = [p for p in positions if frame.iloc[p][list(keys)].tolist() == first]
        raise SourceFormatError(
            path,
            f"duplicate key ({', '.join(keys)}) = {tuple(first)} on lines {_line(numbering, same[0])} and {_line(numbering, same[1])}",
            line=_line(numbering, same[1]),
            column=keys[0],
            expected="each key once",
        )


def check_row_count(frame: pd.DataFrame, path: Path, *, minimum: int, what: str) -> None:
    if len(frame) < minimum:
        raise SourceFormatError(path, f"only {len(frame)} {what}", expected=f"at least {minimum} {what}")


def col(source: str, parse: Callable[..., object] = to_text, *args, **options) -> tuple:
    """How one output column is read by `typed_table`: its source column, its parser (`to_text` unless
    given: to_int, to_float, to_choice or any `parse(frame, column, path, ...)`) and the parser's options."""
    return (source, parse, args, options)


def typed_table(
    raw: pd.DataFrame, path: Path, columns: dict[str, tuple], *, unique: Sequence[str], what: str | None = None, minimum: int = 1
) -> pd.DataFrame:
    """The typed table of a source file: every source column `columns` names must be there, each output
    column is read by its parser in order (the first bad cell fails naming its line), the `unique`
    key may not repeat, and there are at least `minimum` rows (`what` names them; None: no count)."""
    require_columns(raw, path, [source for source, *_ in columns.values()])
    frame = pd.DataFrame({name: parse(raw, source, path, *args, **options) for name, (source, parse, args, options) in columns.items()})
    check_unique(frame, list(unique), path, source=raw)
    if what is not None:
        check_row_count(frame, path, minimum=minimum, what=what)
    return frame
