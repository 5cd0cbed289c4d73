-- Every benchmark prompt's identity and text hash (the text itself stays in staging and raw).
-- A view: it selects from incremental staging tables (macros/by_benchmark.sql) and holds no rows of
-- its own, so a refresh rewrites only what staging read anew.
{{ config(materialized='view') }}
select benchmark, prompt_id, prompt_hash, prompt_chars
from {{ ref('stg_benchmarks__prompts') }}
