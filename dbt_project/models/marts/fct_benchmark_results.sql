-- Per-prompt model results: the score in [0, 1] of each model on each prompt.
select benchmark, model, prompt_id, score
from {{ ref('stg_benchmarks__results') }}
