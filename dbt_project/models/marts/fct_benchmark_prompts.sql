-- Every benchmark prompt's identity and text hash (the text itself stays in staging and raw).
-- Incremental by benchmark (macros/by_benchmark.sql): only the benchmarks whose rows differ are rewritten.
{{ config(materialized='incremental', incremental_strategy='by_benchmark', on_schema_change='fail') }}
select benchmark, prompt_id, prompt_hash, prompt_chars
from {{ ref('stg_benchmarks__prompts') }}
