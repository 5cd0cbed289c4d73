-- One row per (judge, yardstick prompt): whether its top label is in the right occupation and family.
select labeler, yardstick, subset, benchmark, prompt_id, n_labels, occupation_top1, family_top1
from {{ ref('stg_labeling__judge_validation_prompts') }}
