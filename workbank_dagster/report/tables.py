"""The frames the report draws, read from the marts and the analysis schema (pure SQL, no drawing).

Every function takes an open DuckDB connection and returns a DataFrame; a table that a partial run
has not built yet reads as an empty frame, so the report says "not computed" instead of failing.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from ..warehouse import table_exists

OCCUPATION_MAP_SQL = """
with reach as (
    select t.onet_soc_code, l.benchmark, count(distinct l.prompt_id) as n_prompts
    from marts.fct_prompt_task_labels as l
    join marts.dim_task as t using (task_id)
    group by all
),
ranked as (
    select *, row_number() over (partition by onet_soc_code order by n_prompts desc, benchmark) as position,
           count(*) over (partition by onet_soc_code) as n_benchmarks
    from reach
),
reach_text as (
    select onet_soc_code, max(n_benchmarks) as n_benchmarks,
           string_agg(benchmark || ' (' || n_prompts || ')', ', ' order by position) filter (where position <= 5) as top_benchmarks
    from ranked
    group by onet_soc_code
)
select o.onet_soc_code, o.title, o.family_code, o.family_title, c.n_tasks, c.n_tasks_covered, c.share_tasks_covered,
       c.has_coverage, o.employment, c.hours, c.hours_uncovered,
       coalesce(r.n_benchmarks, 0) as n_benchmarks, coalesce(r.top_benchmarks, '') as top_benchmarks
from marts.dim_occupation as o
join marts.fct_occupation_coverage as c using (onet_soc_code)
left join reach_text as r using (onet_soc_code)
order by o.family_code, o.onet_soc_code
"""

FAMILY_SQL = """
select family_code, family_title, n_occupations, n_occupations_with_coverage, n_tasks, n_tasks_covered,
       n_tasks_covered / nullif(n_tasks, 0) as share_tasks_covered, hours, hours_uncovered
from marts.fct_family_coverage
order by family_code
"""

BENCHMARK_INDEX_SQL = "select * from marts.fct_benchmark_index order by benchmark"
# Who made each benchmark of the index, and its licence (benchmarks/catalog.csv, through the catalog).
BENCHMARK_SOURCES_SQL = (
    "select i.benchmark, b.full_name, b.licence from marts.fct_benchmark_index as i "
    "join marts.dim_benchmark as b using (benchmark) order by i.benchmark"
)

# The tasks each benchmark's labels carry (any rank), with its prompts on each and whether the task is
# covered (over every benchmark): the report's benchmark picker. Counted over the labels' two keys
# before the titles join, and with count(*): (benchmark, prompt_id, task_id) is unique (the mart's
# unique_combination_of_columns test), so it is count(distinct prompt_id). At a million prompts
# (2.3M labels) grouping by the joined titles and counting distinct took 1.4-2.4 s; this, ~0.15 s.
BENCHMARK_TASKS_SQL = """
with per_task as (
    select benchmark, task_id, count(*) as n_prompts
    from marts.fct_prompt_task_labels
    group by benchmark, task_id
)
select l.benchmark, l.task_id, t.task, o.title as occupation_title, l.n_prompts,
       c.n_prompts as n_prompts_all, c.covered
from per_task as l
join marts.dim_task as t using (task_id)
join marts.dim_occupation as o using (onet_soc_code)
join marts.fct_task_coverage as c using (task_id)
order by l.benchmark, l.n_prompts desc, l.task_id
"""

MODEL_SCORES_SQL = """
select s.model, s.benchmark, s.onet_soc_code, o.title, s.n_tasks, s.n_prompts, s.share_of_occupation_tasks,
       s.weighted_score, s.simple_score
from analysis.occupation_model_scores as s
join marts.dim_occupation as o using (onet_soc_code)
order by s.benchmark, s.model, s.onet_soc_code
"""

ANALYSIS_TABLES = {
    "coverage_curve": "select * from analysis.coverage_logit_curve order by exposed, log_wage_bill",
    "coverage_ratio": "select * from analysis.coverage_logit_ratio",
    "importance": "select * from analysis.importance_logit order by quintile, exposed",
    "importance_ratio": "select * from analysis.importance_logit_ratio",
    "sensitivity": "select * from analysis.coverage_sensitivity",
    "uncovered_interval": "select * from analysis.work_time_uncovered_interval",
    "score_differences": "select * from analysis.model_score_differences order by abs(gap) desc, model, benchmark, onet_soc_code",
    "zones": "select * from analysis.workbank_task_zones order by task_id",
    "coverage_by_zone": "select * from analysis.coverage_by_zone order by zone",
    "green_light": "select * from analysis.unbenchmarked_green_light order by hours desc nulls last, task_id",
    "telework": "select * from analysis.uncovered_by_telework",
    "validation": "select * from marts.fct_judge_validation order by labeler, yardstick, subset, benchmark, level, metric",
    "judge_ratios": "select * from analysis.judge_ratios order by labeler",
    # The refreshes that moved the map (a run that changed nothing adds a row, not a point).
    "history": "select * from analysis.coverage_history where moved order by refresh",
    "contribution": "select * from analysis.benchmark_contribution order by n_tasks_covered_only_with_it desc, benchmark",
    "rejected_files": "select benchmark, n_prompts, error from marts.dim_benchmark where error is not null order by benchmark",
    "ratios": "select * from analysis.ratios_by_threshold order by ratio, threshold, kind desc",
    "coverage_coefs": "select * from analysis.coverage_logit_coefs order by term",
    "band": "select * from analysis.work_time_uncovered_band",
    "calibration": "select * from analysis.label_calibration order by yardstick, subset",
    "abstention": "select * from analysis.abstention_by_benchmark order by benchmark = 'all', benchmark",
}
# The figures the Limitations section states that no analysis table holds: work hours on imputed time
# shares, and covered tasks by how many benchmarks their prompts come from.
LIMIT_TABLES = {
    "imputed_hours": (
        "select sum(h.hours) filter (where d.time_share_imputed) / sum(h.hours) as share_imputed, "
        "count(*) filter (where d.time_share_imputed) as n_tasks_imputed "
        "from marts.dim_task as d left join marts.fct_task_hours as h using (task_id, onet_soc_code)"
    ),
    "covered_by_benchmarks": "select n_benchmarks, count(*) as n_tasks from marts.fct_task_coverage where covered group by n_benchmarks order by n_benchmarks",
}


def _read(con: duckdb.DuckDBPyConnection, sql: str, *tables: tuple[str, str]) -> pd.DataFrame:
    if all(table_exists(con, schema, name) for schema, name in tables):
        return con.execute(sql).df()
    return pd.DataFrame()


def _tables_in(sql: str) -> list[tuple[str, str]]:
    found = []
    for schema in ("marts", "analysis", "labeling"):
        for part in sql.split(f"{schema}.")[1:]:
            name = part.split()[0].rstrip(",)")
            found.append((schema, name))
    return found


def report_frames(con: duckdb.DuckDBPyConnection) -> dict[str, pd.DataFrame]:
    """Everything the report shows, by name."""
    frames = {
        "occupations": OCCUPATION_MAP_SQL,
        "families": FAMILY_SQL,
        "benchmarks": BENCHMARK_INDEX_SQL,
        "benchmark_sources": BENCHMARK_SOURCES_SQL,
        "landing": "select * from marts.fct_benchmark_landing order by benchmark, occupation_rank",
        "labelers": "select labeler, rule from marts.dim_labeler order by labeler",
        "benchmark_tasks": BENCHMARK_TASKS_SQL,
        # What the warehouse was built from, as its loads recorded it (reference files first).
        "data_versions": "select file, bytes, sha256 from marts.dim_source_file order by benchmark is not null, file",
        "model_scores": MODEL_SCORES_SQL,
        **ANALYSIS_TABLES,
        **LIMIT_TABLES,
    }
    return {name: _read(con, sql, *_tables_in(sql)) for name, sql in frames.items()}
