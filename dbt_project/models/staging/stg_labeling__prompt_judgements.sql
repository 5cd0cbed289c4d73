-- One record per (prompt, labeler): labeled, no_match, failed or unlabeled, with the reason.
{{ union_judge_tables('judgements', [
    ('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('labeler', 'varchar'), ('prompt_hash', 'varchar'),
    ('status', 'varchar'), ('reason', 'varchar'), ('n_labels', 'integer')
]) }}
