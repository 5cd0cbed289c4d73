-- Labels of the active labeler only (var active_labeler); every judge's labels stay in schema labeling.
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('int_prompt_task_labels') }}
where labeler = '{{ var("active_labeler") }}'
