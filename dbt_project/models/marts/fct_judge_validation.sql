-- One row per figure of a judge's validation: the labels_dev halves and the reference set.
select labeler, yardstick, subset, benchmark, level, metric, value, ci_low, ci_high, n_prompts
from {{ ref('stg_labeling__judge_validation') }}
