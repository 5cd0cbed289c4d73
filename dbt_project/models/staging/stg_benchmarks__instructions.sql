-- Each benchmark's harness instruction text and where it came from (empty, with the same columns,
-- before any is loaded). A table, not a view, for the reason stg_benchmarks__results gives.
{{ config(materialized='table') }}
{{ typed_table(source('raw', 'benchmark_instructions'), [
    ('benchmark', 'varchar'), ('kind', 'varchar'), ('instruction', 'varchar'), ('instruction_sha256', 'varchar'),
    ('source_repo', 'varchar'), ('source_commit', 'varchar'), ('source_path', 'varchar'), ('licence', 'varchar'),
    ('pypi_package', 'varchar'), ('pypi_version', 'varchar'), ('pypi_path', 'varchar'), ('source_sha256', 'varchar')
]) }}
