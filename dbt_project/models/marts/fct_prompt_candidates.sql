-- The default embedded judge's candidates: per prompt, its candidate occupations with the judge's
-- probability of each and each one's candidate tasks, most similar first (analysis/label_uncertainty
-- re-draws a prompt's labels from them).
-- Incremental by benchmark (macros/by_benchmark.sql): only the benchmarks whose rows differ are rewritten.
{{ config(materialized='incremental', incremental_strategy='by_benchmark', on_schema_change='fail') }}
select
    benchmark, prompt_id, labeler, prompt_hash, occupation_rank, onet_soc_code, occupation_probability,
    task_rank, task_id, similarity, abstain_below, min_similarity
from {{ ref('stg_labeling__embedded_candidates') }}
