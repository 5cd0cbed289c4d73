-- Every labeler's prompt -> task labels side by side (labeler says whose): the judges' staging models,
-- unioned. fct_prompt_task_labels keeps the active labeler's.
-- Incremental by benchmark (macros/by_benchmark.sql): only the benchmarks whose rows differ are rewritten.
{{ config(materialized='incremental', incremental_strategy='by_benchmark', on_schema_change='fail') }}
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('stg_labeling__embedded_labels') }}
union all
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('stg_labeling__llm_labels') }}
