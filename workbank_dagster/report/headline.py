"""The headline numbers (data/outputs/headline.json), computed from the marts."""

from __future__ import annotations

import hashlib
import math
import subprocess
from importlib import metadata
from pathlib import Path

import duckdb

from ..settings import REPO_ROOT, Settings
from ..warehouse import table_exists
from .intervals import LABEL_BAND_PREFIX, headline_fields, headline_methods


def _json_safe(value):
    """NaN (a quantity a small run cannot estimate) becomes null: headline.json stays valid JSON."""
    return None if isinstance(value, float) and math.isnan(value) else value


def headline_numbers(con: duckdb.DuckDBPyConnection, settings: Settings) -> dict:
    return {key: _json_safe(value) for key, value in _headline_numbers(con, settings).items()}


def _headline_numbers(con: duckdb.DuckDBPyConnection, settings: Settings) -> dict:
    one = lambda sql, *params: con.execute(sql, list(params)).fetchone()[0]  # noqa: E731
    threshold = settings.coverage_threshold
    labeler = settings.active_labeler
    return {
        "n_tasks": one("select count(*) from marts.dim_task"),
        "n_occupations": one("select count(*) from marts.dim_occupation"),
        "n_families": one("select count(*) from marts.fct_family_coverage"),
        "n_benchmarks": one("select count(distinct benchmark) from marts.fct_benchmark_prompts"),
        "n_prompts": one("select count(*) from marts.fct_benchmark_prompts"),
        "n_duplicate_prompt_texts": one(
            "select count(*) - count(distinct prompt_hash) from marts.fct_benchmark_prompts"
        ),
        "n_labels": one("select count(*) from marts.fct_prompt_task_labels"),
        "n_prompts_labeled": one("select count(distinct benchmark || chr(31) || prompt_id) from marts.fct_prompt_task_labels"),
        "n_prompts_unlabeled_language": one(
            "select count(*) from marts.fct_prompt_judgements where labeler = ? and status = 'unlabeled'", labeler
        ),
        "n_prompts_abstained": one(
            "select count(*) from marts.fct_prompt_judgements where labeler = ? and status = 'abstained'", labeler
        ),
        # Two denominators, each named: every prompt, and the prompts with at least one label (the judges' bar of 3 counts these).
        "labels_per_prompt": one(
            "select round(count(*)::double / nullif((select count(*) from marts.fct_benchmark_prompts), 0), 3) from marts.fct_prompt_task_labels"
        ),
        "labels_per_labeled_prompt": one(
            "select round(count(*)::double / nullif(count(distinct benchmark || chr(31) || prompt_id), 0), 3) from marts.fct_prompt_task_labels"
        ),
        "coverage_threshold": threshold,
        "n_tasks_covered": one("select count(*) from marts.fct_task_coverage where covered"),
        "n_occupations_with_covered_task": one("select count(*) from marts.fct_occupation_coverage where has_coverage"),
        "n_families_without_covered_occupation": one(
            "select count(*) from marts.fct_family_coverage where n_occupations_with_coverage = 0"
        ),
        "work_time_share_uncovered": one(
            "select share_uncovered from marts.fct_work_time_coverage where threshold = ?", threshold
        ),
        "total_employment": round(one("select sum(employment) from marts.dim_occupation")),
        "labeler": labeler,
        "benchmark_files_rejected": rejected_files(con),
        **validation_numbers(con, labeler),
        **analysis_numbers(con, threshold),
        # Each interval's kind and method: only a Wilson or a cluster-robust Wald interval is a CI
        # (report/intervals.py); the fields' suffixes say the same (`_ci_`, `_spread_`, `_interval_`).
        "intervals": headline_methods(),
        "version": version_stamp(con, labeler),
    }


def package_version() -> str | None:
    """The installed package's version (pyproject.toml's `version`), None when it is not installed."""
    try:
        return metadata.version("workbank-dagster")
    except metadata.PackageNotFoundError:
        return None


def git_commit(root: Path = REPO_ROOT) -> tuple[str, bool] | None:
    """(commit, whether tracked files differ from it) when `root` is the top of a git checkout; None
    otherwise (a copy, an unpacked archive, git absent), and never the commit of a repository that
    merely contains the folder."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != Path(root).resolve():
        return None
    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    return commit, bool(git("status", "--porcelain", "--untracked-files=no"))


def data_snapshot(con: duckdb.DuckDBPyConnection) -> tuple[str | None, int]:
    """A SHA-256 over every input file's name and SHA-256 (marts.dim_source_file: what the run's raw
    tables were loaded from), in name order, and the number of files. Identical bytes under the same
    names give the same snapshot, wherever they were read from."""
    if not table_exists(con, "marts", "dim_source_file"):
        return None, 0
    rows = con.execute("select file, sha256 from marts.dim_source_file order by file, sha256").fetchall()
    digest = hashlib.sha256("".join(f"{file}\t{sha256}\n" for file, sha256 in rows).encode("utf-8"))
    return digest.hexdigest(), len(rows)


def version_stamp(con: duckdb.DuckDBPyConnection, labeler: str) -> dict:
    """What to cite a run's numbers by: the package version, the git commit (absent outside a git
    checkout; `commit_dirty` says whether tracked files had changes), the labeler, and the data
    snapshot (`data_snapshot`)."""
    snapshot, n_files = data_snapshot(con)
    return {**code_stamp(), "labeler": labeler, "data_snapshot": snapshot, "data_files": n_files}


def code_stamp() -> dict:
    """The part of the version stamp that names the code: the package version and, in a git
    checkout, the commit and whether tracked files differ from it. The headline's code version
    covers it (report/assets.headline), so Dagster calls the headline stale when the code it would
    stamp is another (a new commit, an edited checkout, a copy that is no checkout)."""
    stamp: dict = {"package": "workbank-dagster", "package_version": package_version()}
    found = git_commit()
    if found is not None:
        stamp["commit"], stamp["commit_dirty"] = found
    return stamp


def benchmark_versions(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Benchmark → an MD5 of its prompt ids and texts' hashes, in id order: another value in a later
    refresh means its prompts changed (the coverage history records it per headline)."""
    if not table_exists(con, "marts", "fct_benchmark_prompts"):
        return {}
    return dict(
        con.execute(
            "select benchmark, md5(string_agg(prompt_id || chr(31) || prompt_hash, chr(30) order by prompt_id)) "
            "from marts.fct_benchmark_prompts group by 1 order by 1"
        ).fetchall()
    )


def rejected_files(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Benchmark → why its file was rejected in this run (its previous rows, if any, are counted)."""
    if not table_exists(con, "marts", "dim_benchmark"):
        return {}
    return dict(con.execute("select benchmark, error from marts.dim_benchmark where error is not null order by 1").fetchall())


def analysis_numbers(con: duckdb.DuckDBPyConnection, threshold: int) -> dict:
    """Each number from one analysis table (its asset is named in the key's source below)."""
    out = {}
    for table, prefix in (("coverage_logit_ratio", "exposure_coverage_ratio"), ("importance_logit_ratio", "importance_top_bottom_ratio")):
        if table_exists(con, "analysis", table):
            estimate, low, high = con.execute(f"select estimate, ci_low, ci_high from analysis.{table}").fetchone()
            out.update({prefix: estimate, **headline_fields(prefix, low, high)})
    if table_exists(con, "analysis", "importance_logit_ratio"):
        kept, dropped = con.execute("select occupations_kept, occupations_dropped from analysis.importance_logit_ratio").fetchone()
        out["importance_logit_occupations_dropped"] = dropped
        out["importance_logit_occupations_kept"] = kept
    if table_exists(con, "analysis", "work_time_uncovered_interval"):
        low, high = con.execute("select ci_low, ci_high from analysis.work_time_uncovered_interval").fetchone()
        out.update(headline_fields("work_time_share_uncovered", low, high))
    if table_exists(con, "analysis", "work_time_uncovered_band"):
        low, high = con.execute("select band_low, band_high from analysis.work_time_uncovered_band").fetchone()
        out.update(headline_fields(LABEL_BAND_PREFIX, low, high))
    if table_exists(con, "analysis", "ratios_by_threshold"):
        # The simple ratios (shares straight from the task table) at the headline's threshold, beside the adjusted ones above.
        for ratio, prefix in (("exposure", "exposure_coverage_ratio_simple"), ("importance", "importance_top_bottom_ratio_simple")):
            found = con.execute(
                "select estimate, ci_low, ci_high from analysis.ratios_by_threshold where ratio = ? and kind = 'simple' and threshold = ?",
                [ratio, threshold],
            ).fetchone()
            if found is not None:
                out.update({prefix: found[0], **headline_fields(prefix, found[1], found[2])})
    return out


# The labels_dev figures of the judge issue's table, on the held-out half (headline key suffix → row).
HOLDOUT_FIGURES = {
    "gdpval_family_top1": ("gdpval", "family", "top1"),
    "gdpval_occupation_top1": ("gdpval", "occupation", "top1"),
    "gdpval_occupation_precision": ("gdpval", "occupation", "precision"),
    "gdpval_labels_per_labeled_prompt": ("gdpval", "all", "labels_per_labeled_prompt"),
    "theagentcompany_family_top1": ("theagentcompany", "family", "top1"),
    "abstained_share": ("all", "all", "abstained_share"),
}


def validation_numbers(con: duckdb.DuckDBPyConnection, labeler: str) -> dict:
    """The active labeler's figures on the benchmark authors' development labels (None if unscored):
    family and GDPval occupation top-1 on all of labels_dev, and every figure of the held-out half
    with its 95% interval (Wilson for shares, normal for the mean number of labels)."""
    rows = {}
    if table_exists(con, "marts", "fct_judge_validation"):
        for subset, benchmark, level, metric, value, low, high, n in con.execute(
            "select subset, benchmark, level, metric, value, ci_low, ci_high, n_prompts from marts.fct_judge_validation "
            "where labeler = ? and yardstick = 'labels_dev'",
            [labeler],
        ).fetchall():
            rows[(subset, benchmark, level, metric)] = (value, low, high, n)
    out = {
        "labeler_family_accuracy": rows.get(("all", "all", "family", "top1"), (None,))[0],
        "labeler_occupation_accuracy": rows.get(("all", "gdpval", "occupation", "top1"), (None,))[0],
    }
    for name, (benchmark, level, metric) in HOLDOUT_FIGURES.items():
        value, low, high, n = rows.get(("holdout", benchmark, level, metric), (None, None, None, None))
        out.update({f"holdout_{name}": value, **headline_fields(f"holdout_{name}", low, high), f"holdout_{name}_n": n})
    return out
