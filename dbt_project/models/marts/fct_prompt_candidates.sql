-- The default embedded judge's candidates: per prompt, its candidate occupations with the judge's
-- probability of each and each one's candidate tasks, most similar first (analysis/label_uncertainty
-- re-draws a prompt's labels from them).
-- A view: it selects from incremental staging tables (macros/by_benchmark.sql) and holds no rows of
-- its own, so a refresh rewrites only what staging read anew.
{{ config(materialized='view') }}
select
    benchmark, prompt_id, labeler, prompt_hash, occupation_rank, onet_soc_code, occupation_probability,
    task_rank, task_id, similarity, abstain_below, min_similarity
from {{ ref('stg_labeling__embedded_candidates') }}
