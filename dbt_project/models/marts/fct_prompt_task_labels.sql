-- Labels of the active labeler only (var active_labeler); every judge's labels stay in
-- fct_prompt_task_labels_all_labelers and in schema labeling.
-- Incremental by benchmark (macros/by_benchmark.sql): only the benchmarks whose rows differ are rewritten.
{{ config(materialized='incremental', incremental_strategy='by_benchmark', on_schema_change='fail') }}
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('fct_prompt_task_labels_all_labelers') }}
where labeler = '{{ var("active_labeler") }}'
