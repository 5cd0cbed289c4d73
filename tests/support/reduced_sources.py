"""A reduced but real source folder: the shared data with O*NET cut to a few occupations.

Every labeling embeds the O*NET texts of every occupation that has tasks (task statements and the
prior's training texts, ~59k in all): minutes on 2 cores. Tests of behaviour (a partition's rows, a
re-run, a removal, concurrency) do not need all 923 occupations, only real ones. So the folder keeps
every file as it is (a symlink to the shared file) except the three O*NET files that say which
occupations exist and what their tasks are, which keep their header and the lines of the kept
occupations byte for byte:

- every occupation of SOC family 15 (computer and mathematical) and of minor group 13-2 (financial
  specialists), where the small benchmarks' work lies (cybench, finance-agent, paperbench);
- the first occupation with tasks (by code) of every family besides, so that every family stays;
- the occupations of the task IDs that the audit files (audits/*.csv) name, which must stay known.

Every other source (titles, technology, DWAs, OEWS, exposure, time shares, WORKBank) stays whole:
the pipeline joins them to the occupations it knows, as it does for codes of other O*NET releases.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

KEPT_GROUPS = ("13-2", "15-")
PER_FAMILY = 1
TASK_STATEMENTS = "onet/task_statements_29_3.tsv"
OCCUPATIONS = "onet/occupation_data_29_3.tsv"
IMPORTANCE = "onet/task_ratings_IM_only_db_29.csv"
FILTERED = (TASK_STATEMENTS, OCCUPATIONS, IMPORTANCE)


def kept_occupations(source_dir: Path, audits_dir: Path) -> set[str]:
    """The O*NET-SOC codes the reduced folder keeps (the rule in the module docstring)."""
    task_rows = [line.split("\t", 3) for line in _rows(source_dir / TASK_STATEMENTS)]
    with_tasks = sorted({row[0] for row in task_rows})
    audited = {row["task_id"] for path in sorted(audits_dir.glob("*.csv")) for row in csv.DictReader(path.open(encoding="utf-8")) if row.get("task_id")}
    kept = {code for code in (line.split("\t", 1)[0] for line in _rows(source_dir / OCCUPATIONS)) if code.startswith(KEPT_GROUPS)}
    per_family: dict[str, int] = {}
    for code in with_tasks:
        family = code[:2]
        if code not in kept and per_family.get(family, 0) < PER_FAMILY:
            kept.add(code)
            per_family[family] = per_family.get(family, 0) + 1
    return kept | {row[0] for row in task_rows if row[2] in audited}


def build_reduced_sources(source_dir: Path, audits_dir: Path, target: Path) -> Path:
    """`target` made a reduced copy of `source_dir` (symlinks but for the three filtered files)."""
    codes = kept_occupations(source_dir, audits_dir)
    target.mkdir(parents=True)
    for child in source_dir.iterdir():
        if child.name != "onet":
            os.symlink(child, target / child.name)
    for path in (source_dir / "onet").rglob("*"):
        relative = path.relative_to(source_dir).as_posix()
        destination = target / relative
        if path.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
        elif relative in FILTERED:
            destination.parent.mkdir(parents=True, exist_ok=True)
            separator = "," if relative.endswith(".csv") else "\t"
            lines = (source_dir / relative).read_bytes().decode("utf-8").splitlines(keepends=True)
            kept = [lines[0], *(line for line in lines[1:] if line.split(separator, 1)[0] in codes)]
            destination.write_text("".join(kept), encoding="utf-8", newline="")
        else:
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(path, destination)
    return target


def _rows(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[1:]
