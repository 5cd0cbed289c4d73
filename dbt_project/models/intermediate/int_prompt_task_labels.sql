-- Every judge's labels, side by side (labeler says whose); marts.fct_prompt_task_labels keeps the active labeler's.
{{ union_judge_tables('labels', [
    ('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('task_id', 'integer'), ('rank', 'integer'),
    ('score', 'double'), ('labeler', 'varchar'), ('prompt_hash', 'varchar')
]) }}
