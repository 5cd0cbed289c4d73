-- One record per (prompt, labeler): labeled, abstained, no_match, failed or unlabeled, with the reason and
-- the judge's confidence (NULL where a judge gives none).
select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels, confidence
from {{ ref('stg_labeling__embedded_judgements') }}
union all
select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels, confidence
from {{ ref('stg_labeling__llm_judgements') }}
