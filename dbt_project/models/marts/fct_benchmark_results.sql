-- Per-prompt model results: the score in [0, 1] of each model on each prompt.
-- A view: it selects from incremental staging tables (macros/by_benchmark.sql) and holds no rows of
-- its own, so a refresh rewrites only what staging read anew.
{{ config(materialized='view') }}
select benchmark, model, prompt_id, score
from {{ ref('stg_benchmarks__results') }}
