"""Coverage history: what each refresh of the headline changed, and what each benchmark adds.

Pure functions over plain records; the report's headline step (report/assets.py) appends a row
per refresh to the warehouse table `analysis.coverage_history`, which nothing else writes.

- `next_row`: the row of one refresh, from its record (its numbers, and a version of each
  benchmark's prompts) and the row before it: when and in which run, the labeler, the benchmarks
  and prompts, the tasks, occupations and families covered, the uncovered share of work time and
  both ratios; which benchmarks the refresh added, changed (another set of prompts) or removed, how
  far the headline moved since the refresh before, and whether the refresh moved the map at all
  (`moved`: the report draws those, so a run that changed nothing leaves the page as it was).
  `history_table` folds it over many records (`cli migrate` rebuilds an older checkout's history
  from the Dagster instance with it).
- `benchmark_contributions`: per benchmark, the tasks and occupations covered only because of it
  (covered with every benchmark, not without it) and the uncovered share with it and without it,
  from the labeler's per-benchmark counts.

The history table has a contract (`HISTORY_CONTRACT`): its columns and their types, checked before
it is written (`enforce_contract`).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .coverage import BenchmarkCounts, Summary

HISTORY_CONTRACT = {
    "refresh": "Int64",
    "materialized_at": "datetime64[us, UTC]",
    "run_id": "string",
    "labeler": "string",
    "n_benchmarks": "Int64",
    "n_prompts": "Int64",
    "n_tasks_covered": "Int64",
    "n_occupations_covered": "Int64",
    "n_families_covered": "Int64",
    "work_time_share_uncovered": "Float64",
    "exposure_coverage_ratio": "Float64",
    "importance_top_bottom_ratio": "Float64",
    "benchmarks_added": "string",
    "benchmarks_changed": "string",
    "benchmarks_removed": "string",
    "change_work_time_share_uncovered": "Float64",
    "change_n_tasks_covered": "Int64",
    "change_exposure_coverage_ratio": "Float64",
    "change_importance_top_bottom_ratio": "Float64",
    "moved": "boolean",
    "benchmark_versions": "string",
}

CONTRIBUTION_COLUMNS = {
    "benchmark": "string",
    "n_prompts_labeled": "Int64",
    "n_tasks_covered_only_with_it": "Int64",
    "n_occupations_covered_only_with_it": "Int64",
    "work_time_share_uncovered": "Float64",
    "work_time_share_uncovered_without_it": "Float64",
    "change_without_it": "Float64",
}

# Headline number → history column (the numbers are headline.json's keys).
NUMBERS = {
    "labeler": "labeler",
    "n_benchmarks": "n_benchmarks",
    "n_prompts": "n_prompts",
    "n_tasks_covered": "n_tasks_covered",
    "n_occupations_with_covered_task": "n_occupations_covered",
    "work_time_share_uncovered": "work_time_share_uncovered",
    "exposure_coverage_ratio": "exposure_coverage_ratio",
    "importance_top_bottom_ratio": "importance_top_bottom_ratio",
}
CHANGES = ("work_time_share_uncovered", "n_tasks_covered", "exposure_coverage_ratio", "importance_top_bottom_ratio")


class ContractError(ValueError):
    """A table that does not have the columns and types its contract names."""


def enforce_contract(frame: pd.DataFrame, contract: dict[str, str], table: str) -> pd.DataFrame:
    """`frame` with exactly the contract's columns, in its order and of its types; else ContractError."""
    if list(frame.columns) != list(contract):
        raise ContractError(f"{table}: columns {list(frame.columns)} are not the contract's {list(contract)}")
    wrong = {c: str(frame[c].dtype) for c, t in contract.items() if str(frame[c].dtype) != t}
    if wrong:
        raise ContractError(f"{table}: column types {wrong} are not the contract's {({c: contract[c] for c in wrong})}")
    return frame


def _names(slugs) -> str | None:
    """Benchmarks comma-separated, sorted; None for none."""
    slugs = sorted(slugs)
    return ", ".join(slugs) if slugs else None


def _moved(row: dict) -> bool:
    """A refresh that added, changed or removed a benchmark, or moved a number (a setting changed);
    a change that is not a number (a ratio not estimable either time) is no move."""
    if any(row[column] for column in ("benchmarks_added", "benchmarks_changed", "benchmarks_removed")):
        return True
    return any(value is not None and value == value and value != 0 for value in (row[f"change_{c}"] for c in CHANGES))


def next_row(previous: dict | None, record: dict) -> dict:
    """The history row of one refresh, given the row before it (None for the first).

    `record`: `materialized_at` (a timestamp, seconds), `run_id`, `numbers` (the headline's
    numbers) and `benchmarks` ({slug: a version of its prompts}, or None where none was recorded:
    added, changed and removed are then unknown). The row keeps the versions (`benchmark_versions`,
    JSON), which is all the next refresh needs of it."""
    numbers = record.get("numbers") or {}
    row = {
        "refresh": 1 if previous is None else int(previous["refresh"]) + 1,
        "materialized_at": pd.Timestamp(record["materialized_at"], unit="s", tz="UTC"),
        "run_id": record.get("run_id"),
    }
    row.update({column: numbers.get(key) for key, column in NUMBERS.items()})
    if numbers.get("n_families") is not None and numbers.get("n_families_without_covered_occupation") is not None:
        row["n_families_covered"] = numbers["n_families"] - numbers["n_families_without_covered_occupation"]
    else:
        row["n_families_covered"] = None
    now = record.get("benchmarks")
    before = None if previous is None or _missing(previous.get("benchmark_versions")) else json.loads(previous["benchmark_versions"])
    if now is None or (previous is not None and before is None):
        row.update(benchmarks_added=None, benchmarks_changed=None, benchmarks_removed=None)
    else:
        before = before or {}
        row["benchmarks_added"] = _names(set(now) - set(before))
        row["benchmarks_changed"] = _names(slug for slug in set(now) & set(before) if now[slug] != before[slug])
        row["benchmarks_removed"] = _names(set(before) - set(now))
    for column in CHANGES:
        then = None if previous is None or _missing(previous.get(column)) else previous[column]
        row[f"change_{column}"] = None if then is None or row.get(column) is None else row[column] - then
    row["moved"] = previous is None or _moved(row)
    row["benchmark_versions"] = None if now is None else json.dumps(now, sort_keys=True)
    return row


def _missing(value) -> bool:
    """A value a warehouse row reads back as absent (None, NaN, pandas' NA)."""
    return value is None or bool(pd.isna(value))


def history_frame(rows: list[dict]) -> pd.DataFrame:
    """Rows of `next_row` as a frame of the contract's columns and types."""
    frame = pd.DataFrame(rows, columns=list(HISTORY_CONTRACT))
    if frame.empty:
        return frame.astype(HISTORY_CONTRACT)
    frame["materialized_at"] = pd.to_datetime(frame["materialized_at"], utc=True).astype("datetime64[us, UTC]")
    return frame.astype({c: t for c, t in HISTORY_CONTRACT.items() if c != "materialized_at"})


def history_table(records: list[dict]) -> pd.DataFrame:
    """The history of `records`, oldest first, one row each (`next_row`): what an append per
    refresh would have built, in one go."""
    rows: list[dict] = []
    for record in records:
        rows.append(next_row(rows[-1] if rows else None, record))
    return history_frame(rows)


def benchmark_contributions(counts: BenchmarkCounts, labeled: pd.Series, tasks: pd.DataFrame, families: list[str], threshold: int) -> pd.DataFrame:
    """Per benchmark of one labeler's per-benchmark counts (coverage.BenchmarkCounts), what the
    coverage would lose without it: the tasks covered only with it, the occupations with a covered
    task only with it, and the uncovered share of work time with every benchmark and without it.
    `labeled`: benchmark -> its prompts with a label."""
    rows = []
    if counts.benchmarks:
        covered = counts.total >= threshold
        # Occupations as codes (a missing one a code of its own, as a set of the names keeps it), marked
        # per benchmark: 0.37 to 0.41 s for a thousand benchmarks at a million prompts, against 0.67 to 0.85 s
        # with a set of the names a benchmark (with Summary's marking).
        occupation, names = pd.factorize(tasks["onet_soc_code"], use_na_sentinel=False)
        summary = Summary(tasks, families)
        with_all = summary(counts.total, threshold)
        occupations_with = _marked(occupation[covered], len(names))
        for benchmark in counts.benchmarks:
            rest = counts.without(benchmark)
            covered_without = rest >= threshold
            without = summary(rest, threshold)
            share, share_without = with_all["work_time_share_uncovered"], without["work_time_share_uncovered"]
            rows.append(
                {
                    "benchmark": benchmark,
                    "n_prompts_labeled": int(labeled.get(benchmark, 0)),
                    "n_tasks_covered_only_with_it": int((covered & ~covered_without).sum()),
                    "n_occupations_covered_only_with_it": int((occupations_with & ~_marked(occupation[covered_without], len(names))).sum()),
                    "work_time_share_uncovered": share,
                    "work_time_share_uncovered_without_it": share_without,
                    "change_without_it": None if share is None or share_without is None else share_without - share,
                }
            )
    return pd.DataFrame(rows, columns=list(CONTRIBUTION_COLUMNS)).astype(CONTRIBUTION_COLUMNS)


def _marked(codes: np.ndarray, n: int) -> np.ndarray:
    """A mask of n codes, true at each of `codes`."""
    mask = np.zeros(n, dtype=bool)
    mask[codes] = True
    return mask
