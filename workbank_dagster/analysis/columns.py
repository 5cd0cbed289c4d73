"""What each analysis table and each of its columns means: the one place the analysis assets, the
data dictionary and the Dagster column schemas read it from.

The marts are documented in their dbt `.yml` files; these tables are written by Python, so they are
documented here. `TABLES` names every table the analysis assets write (the report declares its
dependencies on them by these keys, without importing the assets). `column_description(table,
column)` looks for a table-specific entry first, then the shared one.
"""

from __future__ import annotations

import dagster as dg
import pandas as pd

from ..common import table_metadata
from ..settings import default

TABLES = {
    "coverage_logit_coefs": "Logit covered ~ exposed + log(wage bill), SEs clustered by SOC group (docs/method.md §5).",
    "coverage_logit_curve": "P(covered) over a grid of log wage bill, exposed vs not, pointwise 95% bands built on the logit scale and transformed back (inside [0, 1]).",
    "coverage_logit_ratio": "P(covered | exposed) / P(covered | not) at the median wage bill, interval by the delta method on the log ratio.",
    "importance_logit": "Adjusted P(covered) per importance quintile and exposure, occupation fixed effects (docs/method.md §5).",
    "importance_logit_ratio": "Top / bottom importance quintile ratio of adjusted P(covered); occupations dropped as perfectly predicted.",
    "coverage_sensitivity": "Headline coverage numbers under thresholds 1/3/5/10, each judge, leave-one-benchmark-out, duplicate texts once.",
    "work_time_uncovered_interval": "Bootstrap 95% interval of the uncovered work-time share, resampling prompts within benchmarks.",
    "benchmark_contribution": "Per benchmark, what coverage would lose without it: the tasks and occupations covered only with it, "
    "and the uncovered share of work time with it and without it (the leave-one-out rows of coverage_sensitivity, with what only it covers).",
    "coverage_history": "One row per materialization of the headline (report/headline), written by its step: when, which run, "
    "the labeler, benchmarks and prompts, tasks, occupations and families covered, the uncovered share and both ratios, which benchmarks "
    "the refresh added, changed or removed, and how far the headline moved. Append-only: the headline's step adds a row each time it runs, "
    "so the history lives in the warehouse and outlasts the Dagster instance.",
    "judge_ratios": "Both regression ratios (exposure, importance) under each judge's labels, side by side (docs/method.md §4-5).",
    "ratios_by_threshold": "Both ratios of docs/method.md §4-5 at every sensitivity threshold, simple (shares straight from the task table) and "
    "model-adjusted (the regressions'), with the occupations the importance model keeps and why the others leave (analysis/comparison.py).",
    "label_calibration": "The active judge's confidence calibrated on labels_dev's tune half (logistic on logit(confidence)), and per "
    "yardstick and half the observed share of labeled prompts whose top label is in the right occupation beside the mean raw and calibrated confidence.",
    "work_time_uncovered_band": "The label-uncertainty band of the uncovered work-time share: every labeled prompt's labels re-drawn from its "
    "candidates in proportion to the judge's calibrated confidence (analysis/uncertainty.py); 2.5%-97.5% of the draws, not a confidence interval.",
    "abstention_by_benchmark": "Per benchmark and in all, the active judge's prompts: not read (not English), judged, abstained, labeled, and "
    "labeled below its own abstention bars (weak: labeled only because the benchmark reached the abstention cap); in all, the covered tasks "
    "that only the weak labels lift over the threshold.",
    "occupation_model_scores": "O*NET-weighted and simple scores per model, benchmark and occupation (docs/method.md §6).",
    "model_score_differences": "Where weighted and simple scores differ most, with 'title · n tasks · n prompts'.",
    "workbank_task_zones": "Per WORKBank task: mean desire and capability, zone at 3.0, modal Human Agency Scale levels, coverage.",
    "workbank_agency_table": "Worker (rows) vs expert (columns) modal Human Agency Scale, 5x5 task counts.",
    "coverage_by_zone": "Benchmark coverage of each WORKBank zone.",
    "unbenchmarked_green_light": "Green Light tasks with fewer prompts than the coverage threshold (none, or a few), ranked by US work hours.",
    "uncovered_by_telework": "Uncovered US work time split by Dingel-Neiman teleworkability, scores remapped from SOC 2010 to SOC 2018 "
    "through the BLS crosswalk (exact O*NET-SOC match first; a 2018 code fed by several 2010 codes gets their average; see analysis/telework.py).",
}

# What each materialization of the headline (report/headline) records in its metadata, for a
# reader of the Dagster UI: the numbers, and a version of each benchmark's prompts (the history
# keeps both in the warehouse; `cli migrate` reads an older checkout's history from here).
HEADLINE_NUMBERS_METADATA = "headline"
BENCHMARK_VERSIONS_METADATA = "benchmark_versions"

SHARED = {
    "task_id": "O*NET task ID (integer).",
    "onet_soc_code": "O*NET-SOC occupation code, e.g. 11-1011.00.",
    "task": "O*NET task statement.",
    "occupation_title": "O*NET occupation title.",
    "title": "O*NET occupation title.",
    "estimate": "Point estimate.",
    "ci_low": "Lower end of the 95% interval.",
    "ci_high": "Upper end of the 95% interval.",
    "p": "Predicted probability that a task is covered.",
    "n_obs": "Tasks in the estimation sample.",
    "n_clusters": "Clusters (SOC groups) of the clustered standard errors.",
    "exposed": "Eloundou et al. exposure of the task (true = exposed under the configured rater and definition).",
    "threshold": "Coverage threshold: a task is covered with at least this many distinct prompts.",
    "labeler": "The labeler (method:model:template-version) whose labels were counted.",
    "statistic": "Name of the statistic.",
    "n_prompts": "Distinct prompts labeled with the task (all benchmarks).",
    "covered": "n_prompts at or above the coverage threshold.",
    "hours": f"US work hours per year on the task(s): employment x {default('hours_per_year'):,} h x time share.",
    "mean_desire": "Mean worker automation desire (WORKBank, 1-5).",
    "mean_capability": "Mean expert-rated automation capacity (WORKBank, 1-5).",
    "zone": "WORKBank zone at 3.0 on desire and capability: Green Light, Red Light, R&D Opportunity, Low Priority.",
    "model": "The scored system, as named in the results file.",
    "benchmark": "Benchmark slug.",
    "n_tasks": "Number of tasks.",
    "share_uncovered": "Share of work hours on uncovered tasks.",
}

BY_TABLE = {
    "coverage_logit_coefs": {
        "term": "Model term: const, exposed, log_wage_bill.",
        "std_error": "Clustered standard error.",
        "z": "estimate / std_error.",
        "p_value": "Two-sided p-value (normal).",
    },
    "coverage_logit_curve": {"log_wage_bill": "Natural log of the occupation's wage bill (US$), a grid over the observed range."},
    "coverage_logit_ratio": {"n_tasks_without_exposure_or_wage": "Tasks left out: no exposure label or no wage bill."},
    "coverage_sensitivity": {
        "variant": "threshold | judge | duplicate_texts_once | without:<benchmark>.",
        "n_tasks_covered": "Tasks covered under the variant.",
        "n_occupations_with_covered_task": "Occupations with at least one covered task.",
        "n_families_without_covered_occupation": "SOC major groups none of whose occupations has a covered task.",
        "work_time_share_uncovered": "Share of US work hours on uncovered tasks.",
    },
    "importance_logit": {"quintile": "Importance quintile (ntile(5) over rated tasks by importance, task_id); 5 = most important.",
                         "p": "Adjusted probability: mean prediction over the estimation sample with the quintile set to this value.",
                         "ci_low": "Lower end of the 95% interval: the delta method on the logit of the adjusted probability, transformed back.",
                         "ci_high": "Upper end of the 95% interval (logit scale, transformed back)."},
    "importance_logit_ratio": {"occupations_kept": "Occupations in the fixed-effects sample.",
                               "occupations_dropped": "Occupations perfectly predicted (all or none of their tasks covered), left out."},
    "occupation_model_scores": {
        "n_tasks": "The occupation's tasks with at least k scored prompts.",
        "n_prompts": "Distinct scored prompts mapped to those tasks.",
        "n_prompts_weak": "Of those prompts, the ones whose labels the judge marks as weak (below its own abstention bars; NULL for a judge without bars).",
        "share_of_occupation_tasks": "n_tasks / the occupation's number of tasks.",
        "weighted_score": "Mean over tasks of each task's mean prompt score (every task counts equally).",
        "simple_score": "Mean score over the distinct prompts.",
    },
    "model_score_differences": {
        "n_tasks": "The occupation's tasks with at least k scored prompts.",
        "n_prompts": "Distinct scored prompts mapped to those tasks.",
        "n_prompts_weak": "Of those prompts, the ones whose labels the judge marks as weak (below its own abstention bars).",
        "share_of_occupation_tasks": "n_tasks / the occupation's number of tasks.",
        "weighted_score": "Mean over tasks of each task's mean prompt score.",
        "simple_score": "Mean score over the distinct prompts.",
        "gap": "weighted_score - simple_score.",
        "label": "'<title> · <n> tasks · <n> prompts'.",
    },
    "workbank_task_zones": {
        "n_workers": "Worker ratings of the task.",
        "n_experts": "Expert ratings of the task (exact duplicate rows dropped).",
        "modal_has_worker": "Modal worker Human Agency Scale level (1-5; ties to the level nearest the mean, then the lower).",
        "modal_has_expert": "Modal expert Human Agency Scale level (same tie rule).",
    },
    "workbank_agency_table": {"worker": "Modal worker HAS level (row).", **{f"H{i}": f"Tasks whose modal expert HAS level is H{i}." for i in range(1, 6)}},
    "coverage_by_zone": {"n_covered": "Covered tasks in the zone.", "share_covered": "n_covered / n_tasks."},
    "unbenchmarked_green_light": {"n_prompts": "Distinct prompts labeled with the task (below the threshold)."},
    "uncovered_by_telework": {
        "group": "teleworkable | not_teleworkable (Dingel & Neiman) | unmatched (no score by O*NET-SOC code or SOC 2010->2018 crosswalk).",
        "hours_total": "US work hours per year in the group.",
        "hours_uncovered": "Of which on uncovered tasks.",
        "share_of_all_uncovered_hours": "The group's share of all uncovered hours.",
    },
    "benchmark_contribution": {
        "n_prompts_labeled": "The benchmark's prompts with at least one label.",
        "n_tasks_covered_only_with_it": "Tasks covered with every benchmark and not covered without this one.",
        "n_occupations_covered_only_with_it": "Occupations with a covered task with every benchmark and none without this one.",
        "work_time_share_uncovered": "Share of US work hours on uncovered tasks, every benchmark counted.",
        "work_time_share_uncovered_without_it": "The same share with this benchmark's prompts left out.",
        "change_without_it": "work_time_share_uncovered_without_it - work_time_share_uncovered: how much more work time would be uncovered.",
    },
    "coverage_history": {
        "refresh": "Position of the headline materialization, oldest first (1, 2, ...).",
        "materialized_at": "When the headline was materialized (UTC).",
        "run_id": "The Dagster run that materialized it.",
        "n_benchmarks": "Benchmarks counted in that refresh.",
        "n_prompts": "Prompts counted in that refresh.",
        "n_tasks_covered": "Tasks covered in that refresh.",
        "n_occupations_covered": "Occupations with at least one covered task.",
        "n_families_covered": "SOC major groups with at least one occupation with a covered task.",
        "work_time_share_uncovered": "Share of US work hours on uncovered tasks.",
        "exposure_coverage_ratio": "P(covered | exposed) / P(covered | not exposed) at the median wage bill.",
        "importance_top_bottom_ratio": "Adjusted P(covered) of the most / least important quintile.",
        "benchmarks_added": "Benchmarks in this refresh and not in the one before (comma-separated; every benchmark in the first refresh).",
        "benchmarks_changed": "Benchmarks in both whose prompts changed (another set of prompt ids or texts).",
        "benchmarks_removed": "Benchmarks in the refresh before and not in this one.",
        "change_work_time_share_uncovered": "Uncovered share minus the refresh before's (NULL for the first).",
        "change_n_tasks_covered": "Tasks covered minus the refresh before's.",
        "change_exposure_coverage_ratio": "Exposure ratio minus the refresh before's.",
        "change_importance_top_bottom_ratio": "Importance ratio minus the refresh before's.",
        "moved": "The first refresh, or one that added, changed or removed a benchmark or moved a number (the report's trend shows these).",
        "benchmark_versions": "Each benchmark's prompts version in that refresh, as JSON {slug: MD5 of its prompt ids and text hashes}: "
        "what the next refresh compares to name the benchmarks it added, changed or removed (NULL where none was recorded).",
    },
    "judge_ratios": {
        "exposure_coverage_ratio": "P(covered | exposed) / P(covered | not exposed) at the median wage bill, with this judge's coverage.",
        "exposure_ci_low": "Lower end of the exposure ratio's 95% interval (delta method on the log ratio).",
        "exposure_ci_high": "Upper end of the exposure ratio's 95% interval.",
        "importance_top_bottom_ratio": "Adjusted P(covered) of the most / least important quintile, with this judge's coverage.",
        "importance_ci_low": "Lower end of the importance ratio's 95% interval (delta method on the log ratio).",
        "importance_ci_high": "Upper end of the importance ratio's 95% interval.",
    },
    "ratios_by_threshold": {
        "ratio": "exposure (P(covered | exposed) / P(covered | not)) or importance (most / least important quintile).",
        "kind": "simple (shares straight from the task table) or adjusted (the regression's: median wage bill; occupation fixed effects).",
        "ci_low": "Lower end of the 95% CI: cluster-robust Wald, delta method on the log ratio (simple: the saturated logit's).",
        "ci_high": "Upper end of the 95% CI.",
        "p_high": "Simple: share covered of the exposed (most important) tasks.",
        "p_low": "Simple: share covered of the not exposed (least important) tasks.",
        "n_tasks": "Tasks in the computation (adjusted importance: in the occupations kept).",
        "n_tasks_covered": "Of which covered.",
        "n_occupations": "Occupations in the computation (adjusted importance: those kept, with both covered and uncovered rated tasks).",
        "occupations_all_covered": "Importance: occupations whose rated tasks are all covered (perfectly predicted: they leave the adjusted model).",
        "occupations_none_covered": "Importance: occupations none of whose rated tasks is covered (they leave the adjusted model).",
        "occupations_without_ratings": "Importance: occupations with no rated task (O*NET analyst-written tasks only): in no importance ratio.",
    },
    "abstention_by_benchmark": {
        "benchmark": "Benchmark slug, or 'all'.",
        "n_prompts": "Prompts of the benchmark.",
        "n_not_read": "Prompts the English-only model cannot read (mostly Chinese): left unlabeled.",
        "n_judged": "Prompts the judge read.",
        "n_abstained": "Of which the judge abstained on.",
        "n_labeled": "Of which the judge labeled.",
        "n_labeled_weak": "Labeled prompts below the judge's own abstention bars (confidence or rank-1 similarity): labeled only because the benchmark reached its abstention cap.",
        "n_abstained_errand": "Of the abstentions, personal errands (the agent acting as a customer or private person, judge v7): outside the abstention cap.",
        "share_abstained": "n_abstained / n_judged.",
        "at_cap": "The benchmark reached the abstention cap (some of its labeled prompts are below the bars).",
        "n_tasks_covered_only_with_weak": "All row only: covered tasks that would be under the threshold without the weak labels.",
    },
    "label_calibration": {
        "yardstick": "labels_dev (the benchmark authors' occupations: GDPval) or reference (the reference set, which spans 12 benchmarks).",
        "subset": "Half of the yardstick's committed split: tune or holdout.",
        "n_prompts": "Prompts the judge labeled that the yardstick gives an occupation for.",
        "observed_occupation_top1": "Share of them whose top label is a task of the right occupation.",
        "mean_confidence": "Mean raw confidence of the judge on them (its best occupation's probability).",
        "mean_calibrated": "Mean calibrated confidence on them: what the calibration predicts the observed share to be.",
        "fitted_on": "True for the rows the calibration was fitted on (labels_dev, tune).",
        "intercept": "Calibration: q = logistic(intercept + slope * logit(confidence)).",
        "slope": "Calibration slope on logit(confidence).",
        "intercept_se": "Standard error of the intercept (inverse information).",
        "slope_se": "Standard error of the slope.",
        "fitted": "False when the calibration could not be fitted (too few prompts, or all right or all wrong): raw confidence used.",
    },
    "work_time_uncovered_band": {
        "share_uncovered": "Share of US work hours on uncovered tasks with the labels as they are (the headline).",
        "band_low": "2.5% quantile of the uncovered share over the draws.",
        "band_high": "97.5% quantile of the uncovered share over the draws.",
        "draws_mean": "Mean uncovered share over the draws.",
        "n_tasks_covered_low": "2.5% quantile of the tasks covered over the draws.",
        "n_tasks_covered_high": "97.5% quantile of the tasks covered over the draws.",
        "n_occupations_low": "2.5% quantile of the occupations with a covered task over the draws.",
        "n_occupations_high": "97.5% quantile of the occupations with a covered task over the draws.",
        "n_tasks_labeled": "Tasks with at least one label as the judge labeled.",
        "n_tasks_covered": "Tasks covered as the judge labeled (the headline's).",
        "tasks_labeled_mean": "Mean over the draws of the tasks with at least one label.",
        "draws": "Re-drawings of every labeled prompt's labels.",
        "prompts_labeled": "Prompts the judge labeled (those re-drawn).",
        "prompts_with_alternatives": "Of which with another candidate occupation to move to.",
        "mean_calibrated_confidence": "Mean calibrated probability that a labeled prompt's labels are in the right occupation.",
        "calibration_fitted": "Whether the calibration was fitted (else the raw confidence was used).",
        "method": "How the band was built.",
    },
    "work_time_uncovered_interval": {
        "share_uncovered": "Share of US work hours on uncovered tasks (the estimate).",
        "ci_low": "Lower end of the reported 95% bootstrap spread (basic / pivotal interval; not a confidence interval, see method).",
        "ci_high": "Upper end of the reported 95% bootstrap spread (basic / pivotal interval).",
        "bootstrap_mean": "Mean of the bootstrap replicates.",
        "ci_low_percentile": "Plain percentile interval, lower end.",
        "ci_high_percentile": "Plain percentile interval, upper end.",
        "ci_low_bca": "BCa interval (bias-corrected and accelerated), lower end.",
        "ci_high_bca": "BCa interval, upper end.",
        "replicates": "Bootstrap replicates (prompts resampled within benchmarks).",
        "method": "How the interval was built.",
    },
    "user_audit": {
        "audit": "The audit's file name (audits/<slug>.csv).",
        "row": "Row number in the audit file.",
        "input_task": "The task as the audit gave it.",
        "matched_by": "How the row's O*NET task was found: 'task_id' (the file gave the ID) or 'embedded judge' (free text matched by judge v3's rule through labeling.matching; its score in match_score).",
        "match_score": "Cosine similarity of a text match.",
        "onet_task": "The matched O*NET task statement.",
        "desire": "WORKBank mean worker desire, where rated.",
        "capability": "WORKBank mean expert capability, where rated.",
        "unbenchmarked": "Not covered by any benchmark.",
    },
}


def column_description(table: str, column: str) -> str:
    return BY_TABLE.get(table, {}).get(column) or SHARED.get(column, "")


def analysis_table_metadata(name: str, frame: pd.DataFrame) -> dict:
    """Row count, preview, and a column schema whose columns say what they mean."""
    metadata = table_metadata(frame)
    metadata["dagster/column_schema"] = dg.TableSchema(
        columns=[dg.TableColumn(str(c), str(frame[c].dtype), description=column_description(name, str(c)) or None) for c in frame.columns]
    )
    return metadata
