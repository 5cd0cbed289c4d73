-- Per-prompt model results: the score in [0, 1] of each model on each prompt.
-- Incremental by benchmark (macros/by_benchmark.sql): only the benchmarks whose rows differ are rewritten.
{{ config(materialized='incremental', incremental_strategy='by_benchmark', on_schema_change='fail') }}
select benchmark, model, prompt_id, score
from {{ ref('stg_benchmarks__results') }}
