"""What each analysis table and each of its columns means: the one place the analysis assets, the
data dictionary and the Dagster column schemas read it from.

The marts are documented in their dbt `.yml` files; these tables are written by Python, so they are
documented here. `TABLES` names every table the analysis assets write (the report declares its
dependencies on them by these keys, without importing the assets). `column_description(table,
column)` looks for a table-specific entry first, then the shared one.
"""

from __future__ import annotations

from ..settings import default

TABLES = {
    "coverage_logit_coefs": "Logit covered ~ exposed + log(wage bill), SEs clustered by SOC group (docs/method.md §5).",
    "coverage_logit_curve": "P(covered) over a grid of log wage bill, exposed vs not, 95% delta-method bands on the probability scale.",
    "coverage_logit_ratio": "P(covered | exposed) / P(covered | not) at the median wage bill, interval by the delta method on the log ratio.",
    "importance_logit": "Adjusted P(covered) per importance quintile and exposure, occupation fixed effects (docs/method.md §5).",
    "importance_logit_ratio": "Top / bottom importance quintile ratio of adjusted P(covered); occupations dropped as perfectly predicted.",
    "coverage_sensitivity": "Headline coverage numbers under thresholds 1/3/5/10, each judge, leave-one-benchmark-out, duplicate texts once.",
    "work_time_uncovered_interval": "Bootstrap 95% interval of the uncovered work-time share, resampling prompts within benchmarks.",
    "benchmark_contribution": "Per benchmark, what coverage would lose without it: the tasks and occupations covered only with it, "
    "and the uncovered share of work time with it and without it (the leave-one-out rows of coverage_sensitivity, with what only it covers).",
    "coverage_history": "One row per materialization of the headline (report/headline), read from the Dagster instance: when, which run, "
    "the labeler, benchmarks and prompts, tasks, occupations and families covered, the uncovered share and both ratios, which benchmarks "
    "the refresh added, changed or removed, and how far the headline moved. Rebuilt from the instance on every run, so it survives a new warehouse.",
    "judge_ratios": "Both regression ratios (exposure, importance) under each judge's labels, side by side (docs/method.md §4-5).",
    "occupation_model_scores": "O*NET-weighted and simple scores per model, benchmark and occupation (docs/method.md §6).",
    "model_score_differences": "Where weighted and simple scores differ most, with 'title · n tasks · n prompts'.",
    "workbank_task_zones": "Per WORKBank task: mean desire and capability, zone at 3.0, modal Human Agency Scale levels, coverage.",
    "workbank_agency_table": "Worker (rows) vs expert (columns) modal Human Agency Scale, 5x5 task counts.",
    "coverage_by_zone": "Benchmark coverage of each WORKBank zone.",
    "unbenchmarked_green_light": "Green Light tasks no benchmark covers, ranked by US work hours.",
    "uncovered_by_telework": "Uncovered US work time split by Dingel-Neiman teleworkability, scores remapped from SOC 2010 to SOC 2018 "
    "through the BLS crosswalk (exact O*NET-SOC match first; a 2018 code fed by several 2010 codes gets their average; see analysis/telework.py).",
}

# What each materialization of the headline (report/headline) records in its metadata, which
# analysis/coverage_history reads back from the instance: the numbers, and a version of each
# benchmark's prompts.
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
                         "p": "Adjusted probability: mean prediction over the estimation sample with the quintile set to this value."},
    "importance_logit_ratio": {"occupations_kept": "Occupations in the fixed-effects sample.",
                               "occupations_dropped": "Occupations perfectly predicted (all or none of their tasks covered), left out."},
    "occupation_model_scores": {
        "n_tasks": "The occupation's tasks with at least k scored prompts.",
        "n_prompts": "Distinct scored prompts mapped to those tasks.",
        "share_of_occupation_tasks": "n_tasks / the occupation's number of tasks.",
        "weighted_score": "Mean over tasks of each task's mean prompt score (every task counts equally).",
        "simple_score": "Mean score over the distinct prompts.",
    },
    "model_score_differences": {
        "n_tasks": "The occupation's tasks with at least k scored prompts.",
        "n_prompts": "Distinct scored prompts mapped to those tasks.",
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
    },
    "judge_ratios": {
        "exposure_coverage_ratio": "P(covered | exposed) / P(covered | not exposed) at the median wage bill, with this judge's coverage.",
        "exposure_ci_low": "Lower end of the exposure ratio's 95% interval (delta method on the log ratio).",
        "exposure_ci_high": "Upper end of the exposure ratio's 95% interval.",
        "importance_top_bottom_ratio": "Adjusted P(covered) of the most / least important quintile, with this judge's coverage.",
        "importance_ci_low": "Lower end of the importance ratio's 95% interval (delta method on the log ratio).",
        "importance_ci_high": "Upper end of the importance ratio's 95% interval.",
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
