-- Every judge's labels; marts.fct_prompt_task_labels keeps the active labeler's.
select benchmark, prompt_id, task_id::integer as task_id, rank::integer as rank, score::double as score, labeler, prompt_hash
from {{ source('labeling', 'prompt_task_labels') }}
