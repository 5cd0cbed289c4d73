-- The embedded judge's labels, typed (empty, with the same columns, until that judge has run).
-- A table, not a view: it reads per-benchmark files by a path relative to dbt's file_search_path,
-- which a view would carry to every later reader of the warehouse.
{{ config(materialized='table') }}
{{ judge_table(source('labeling', 'embedded_labels'), 'labels') }}
