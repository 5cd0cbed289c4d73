-- Labels of the active labeler only (var active_labeler); every judge's labels stay in
-- fct_prompt_task_labels_all_labelers and in schema labeling.
-- A view: it selects from incremental staging tables (macros/by_benchmark.sql) and holds no rows of
-- its own, so a refresh rewrites only what staging read anew.
{{ config(materialized='view') }}
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('fct_prompt_task_labels_all_labelers') }}
where labeler = '{{ var("active_labeler") }}'
