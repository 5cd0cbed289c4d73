-- Every labeler's prompt -> task labels side by side (labeler says whose): the judges' staging models,
-- unioned. fct_prompt_task_labels keeps the active labeler's.
-- A view: it selects from incremental staging tables (macros/by_benchmark.sql) and holds no rows of
-- its own, so a refresh rewrites only what staging read anew.
{{ config(materialized='view') }}
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('stg_labeling__embedded_labels') }}
union all
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('stg_labeling__llm_labels') }}
