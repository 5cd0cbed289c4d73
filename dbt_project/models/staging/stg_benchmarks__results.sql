-- Per-prompt model results of every benchmark (empty, with the same columns, before any is loaded).
-- A table, not a view: it reads per-benchmark files by a path relative to dbt's file_search_path,
-- which a view would carry to every later reader of the warehouse.
{{ config(materialized='table') }}
{{ typed_table(source('raw', 'benchmark_results'), [
    ('benchmark', 'varchar'), ('model', 'varchar'), ('prompt_id', 'varchar'), ('score', 'double precision'), ('extra', 'varchar')
]) }}
