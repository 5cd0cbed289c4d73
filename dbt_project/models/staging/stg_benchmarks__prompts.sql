-- Every benchmark's prompts (empty, with the same columns, before any benchmark is loaded).
-- A table, not a view: it reads per-benchmark files by a path relative to dbt's file_search_path,
-- which a view would carry to every later reader of the warehouse.
{{ config(materialized='table') }}
with prompts as (
    {{ typed_table(source('raw', 'benchmark_prompts'), [
        ('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('prompt', 'varchar'), ('prompt_hash', 'varchar')
    ]) }}
)

select benchmark, prompt_id, prompt, prompt_hash, length(prompt) as prompt_chars
from prompts
