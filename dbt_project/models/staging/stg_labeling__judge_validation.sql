-- Every judge's validation figures, typed (empty, with the same columns, until validation has run).
{{ typed_table(source('labeling', 'judge_validation'), [
    ('labeler', 'varchar'), ('yardstick', 'varchar'), ('subset', 'varchar'), ('benchmark', 'varchar'),
    ('level', 'varchar'), ('metric', 'varchar'), ('value', 'double precision'), ('ci_low', 'double precision'),
    ('ci_high', 'double precision'), ('n_prompts', 'bigint')]) }}
