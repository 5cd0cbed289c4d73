-- Every labeler's prompt -> task labels side by side (fct_prompt_task_labels keeps the active labeler's).
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('int_prompt_task_labels') }}
