-- One record per (prompt, labeler): labeled, abstained, no_match, failed or unlabeled, with the reason and
-- the judge's confidence (NULL where a judge gives none).
{{ union_judge_tables('judgements', [
    ('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('labeler', 'varchar'), ('prompt_hash', 'varchar'),
    ('status', 'varchar'), ('reason', 'varchar'), ('n_labels', 'integer'), ('confidence', 'double precision')
]) }}
