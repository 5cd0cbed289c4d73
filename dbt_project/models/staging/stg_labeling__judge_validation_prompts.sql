-- Every judge's outcome on each yardstick prompt, typed (empty, with the same columns, until validation has run).
{{ typed_table(source('labeling', 'judge_validation_prompts'), [
    ('labeler', 'varchar'), ('yardstick', 'varchar'), ('subset', 'varchar'), ('benchmark', 'varchar'),
    ('prompt_id', 'varchar'), ('n_labels', 'integer'), ('occupation_top1', 'boolean'), ('family_top1', 'boolean')]) }}
