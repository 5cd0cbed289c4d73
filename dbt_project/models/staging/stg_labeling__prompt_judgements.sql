select benchmark, prompt_id, labeler, prompt_hash, status, reason, n_labels::integer as n_labels
from {{ source('labeling', 'prompt_judgements') }}
