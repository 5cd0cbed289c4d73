-- The default embedded judge's candidates, typed (empty, with the same columns, until that judge has run).
-- Incremental by benchmark (macros/by_benchmark.sql): a build reads only the files of benchmarks that
-- are new or changed, after deleting the rows of those that changed or left. A table, not a view: it
-- reads per-benchmark files by a path relative to dbt's file_search_path, which a view would carry to
-- every later reader of the warehouse.
{{ config(materialized='incremental', unique_key='benchmark', incremental_strategy='delete+insert', on_schema_change='fail',
           pre_hook="{{ delete_stale_benchmarks('embedded_candidates') }}") }}
{{ judge_table(source('labeling', 'embedded_candidates')) }}
