-- The default embedded judge's candidates, typed (empty, with the same columns, until that judge has run).
-- A table, not a view: it reads per-benchmark files by a path relative to dbt's file_search_path,
-- which a view would carry to every later reader of the warehouse.
{{ config(materialized='table') }}
{{ typed_table(source('labeling', 'embedded_candidates'), [
    ('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('labeler', 'varchar'), ('prompt_hash', 'varchar'),
    ('occupation_rank', 'integer'), ('onet_soc_code', 'varchar'), ('occupation_probability', 'double precision'),
    ('task_rank', 'integer'), ('task_id', 'integer'), ('similarity', 'double precision'),
    ('abstain_below', 'double precision'), ('min_similarity', 'double precision')]) }}
