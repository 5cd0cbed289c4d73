-- Per benchmark: its prompts, distinct texts and example prompt (the smallest prompt_id), and the hash
-- of the prompts file they were read from. Incremental by benchmark (macros/by_benchmark.sql): only
-- the benchmarks whose prompts file the staging model read anew are aggregated again, so the
-- benchmark index does not read every prompt's text on every build.
{{ config(materialized='incremental', unique_key='benchmark', incremental_strategy='delete+insert', on_schema_change='fail',
           pre_hook="{{ delete_benchmarks_read_anew(ref('stg_benchmarks__prompts')) }}") }}
select
    benchmark,
    source_file_hash,
    count(*) as n_prompts,
    count(distinct prompt_hash) as n_distinct_texts,
    arg_min(prompt, prompt_id) as example_prompt,
    min(prompt_id) as example_prompt_id
from {{ ref('stg_benchmarks__prompts') }}
{% if is_incremental() -%}
    where benchmark not in (select t.benchmark from {{ this }} as t)
{%- endif %}
group by benchmark, source_file_hash
