-- Labels of the active labeler only (var active_labeler); every judge's labels stay in
-- fct_prompt_task_labels_all_labelers and in schema labeling.
select benchmark, prompt_id, task_id, rank, score, labeler, prompt_hash
from {{ ref('fct_prompt_task_labels_all_labelers') }}
where labeler = '{{ var("active_labeler") }}'
