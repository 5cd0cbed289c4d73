-- The embedded judge's judgements, typed (empty, with the same columns, until that judge has run).
{{ judge_table(source('labeling', 'embedded_judgements'), 'judgements') }}
