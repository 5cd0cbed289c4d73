-- Every benchmark's prompts (empty, with the same columns, before any benchmark is loaded).
-- Incremental by benchmark (macros/by_benchmark.sql): a build reads only the files of benchmarks that
-- are new or changed, after deleting the rows of those that changed or left. A table, not a view: it
-- reads per-benchmark files by a path relative to dbt's file_search_path, which a view would carry to
-- every later reader of the warehouse.
{{ config(materialized='incremental', unique_key='benchmark', incremental_strategy='delete+insert', on_schema_change='fail',
           pre_hook="{{ delete_stale_benchmarks('benchmark_prompts') }}") }}
with prompts as (
    {{ benchmark_table(source('raw', 'benchmark_prompts'), [
        ('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('prompt', 'varchar'), ('prompt_hash', 'varchar')
    ]) }}
)

select benchmark, prompt_id, prompt, prompt_hash, length(prompt) as prompt_chars, source_file_hash
from prompts
