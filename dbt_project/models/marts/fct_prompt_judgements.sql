-- One record per (prompt, labeler), every labeler: labeled, abstained, no_match, failed or unlabeled,
-- with the reason and the judge's confidence (NULL where a judge gives none): the judges' staging
-- models, unioned.
-- Incremental by benchmark (macros/by_benchmark.sql): only the benchmarks whose rows differ are rewritten.
{{ config(materialized='incremental', incremental_strategy='by_benchmark', on_schema_change='fail') }}
select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels, confidence
from {{ ref('stg_labeling__embedded_judgements') }}
union all
select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels, confidence
from {{ ref('stg_labeling__llm_judgements') }}
