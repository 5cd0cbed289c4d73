-- One record per (prompt, labeler), every labeler: labeled, abstained, no_match, failed or unlabeled,
-- with the reason and the judge's confidence (NULL where a judge gives none): the judges' staging
-- models, unioned.
-- A view: it selects from incremental staging tables (macros/by_benchmark.sql) and holds no rows of
-- its own, so a refresh rewrites only what staging read anew.
{{ config(materialized='view') }}
select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels, confidence
from {{ ref('stg_labeling__embedded_judgements') }}
union all
select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels, confidence
from {{ ref('stg_labeling__llm_judgements') }}
