-- The embedded judge's labels, typed (empty, with the same columns, until that judge has run).
{{ judge_table(source('labeling', 'embedded_labels'), 'labels') }}
