-- One record per (prompt, labeler), every labeler: labeled, abstained, no_match, failed or unlabeled.
select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels, confidence
from {{ ref('int_prompt_judgements') }}
