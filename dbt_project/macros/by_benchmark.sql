{#-
  Per-benchmark tables, built incrementally by benchmark (docs/scaling.md, "Growth costs what changed").

  Staging, over the per-benchmark Parquet files (one file per table and benchmark, partition_files.py):
  each row records the hash of the file it was read from (`source_file_hash`: DuckDB's hash of the
  file's bytes). A build reads only the files whose hash the model does not hold yet (new or
  changed benchmarks, `benchmark_table`), after its pre-hook deleted the rows of every benchmark
  whose file changed or is gone (`delete_stale_benchmarks`). A full refresh, or a first build, reads
  every file.

  An aggregate per benchmark over a staging model (int_benchmark_prompt_stats) keeps the staging
  rows' file hash: its pre-hook deletes the benchmarks whose hash changed or that left
  (`delete_benchmarks_read_anew`), and a build aggregates the benchmarks it does not hold.

  Marts over staging (fct_benchmark_prompts, fct_prompt_candidates, ...) only select, union and filter
  staging rows: they are views, which hold nothing to rebuild. (An incremental strategy that computed
  each mart's select whole and compared it by benchmark cost 8.5 s for fct_prompt_candidates alone at
  a million prompts on every refresh: docs/scaling.md.) What dbt cannot see from the files (an edited
  model, macro or column, a var: the project) makes the pipeline run `dbt build --full-refresh`
  (transform/assets.py).
-#}

{% macro benchmark_files(table) %}
{#- benchmark -> {path, hash, rows} for the files of one per-benchmark table now (run time only); rows
    from the file's footer: a file with none (a benchmark without results) has nothing to read. -#}
{%- set files = {} -%}
{%- if execute -%}
    {%- set found = run_query(
        "select regexp_extract(filename, '([^/]+)\\.parquet$', 1), filename, hash(content)::varchar from read_blob('" ~ table ~ "/*.parquet')"
    ) -%}
    {%- if found.rows | length > 0 -%}
        {#- parquet_file_metadata, unlike read_blob, fails when no file matches -#}
        {%- set rows = {} -%}
        {%- for path, n_rows in run_query("select file_name, num_rows from parquet_file_metadata('" ~ table ~ "/*.parquet')").rows -%}
            {%- do rows.update({path: n_rows}) -%}
        {%- endfor -%}
        {%- for benchmark, path, file_hash in found.rows -%}
            {#- a file that came between the two reads counts as having rows: it is read -#}
            {%- do files.update({benchmark: {'path': path, 'hash': file_hash, 'rows': rows.get(path, 1)}}) -%}
        {%- endfor -%}
    {%- endif -%}
{%- endif -%}
{{ return(files) }}
{% endmacro %}

{% macro built_file_hashes() %}
{#- benchmark -> the hash of the file its rows in this incremental model were read from. -#}
{%- set built = {} -%}
{%- if execute and is_incremental() -%}
    {%- for benchmark, file_hash in run_query("select distinct benchmark, source_file_hash from " ~ this).rows -%}
        {%- do built.update({benchmark: file_hash}) -%}
    {%- endfor -%}
{%- endif -%}
{{ return(built) }}
{% endmacro %}

{% macro benchmark_table(relation, columns) %}
{#-
  The rows of an external per-benchmark source (`relation`: source('raw', 'benchmark_prompts')) with
  `columns` cast to their types and the hash of each row's file: on an incremental build, only the
  files the model does not hold (a file without rows adds none, so it is not read: a benchmark
  without results); empty, with the same columns, when there are none (a judge that never ran has
  no file at all).
-#}
{%- set files = benchmark_files(relation.identifier) -%}
{%- set built = built_file_hashes() -%}
{%- set fresh = [] -%}
{%- for benchmark, file in files.items() if file['rows'] > 0 and built.get(benchmark) != file['hash'] -%}
    {%- do fresh.append(file) -%}
{%- endfor -%}
{%- if not fresh %}
select {% for name, type in columns %}cast(null as {{ type }}) as {{ name }}, {% endfor %}cast(null as varchar) as source_file_hash
where false
{%- else %}
select {% for name, type in columns %}cast(file_rows.{{ name }} as {{ type }}) as {{ name }}, {% endfor %}files.file_hash as source_file_hash
from read_parquet([{% for file in fresh %}'{{ file.path | replace("'", "''") }}'{{ ", " if not loop.last }}{% endfor %}], union_by_name = true, filename = true) as file_rows
inner join (values {% for file in fresh %}('{{ file.path | replace("'", "''") }}', '{{ file.hash }}'){{ ", " if not loop.last }}{% endfor %}) as files (filename, file_hash)
    on file_rows.filename = files.filename
{%- endif %}
{% endmacro %}

{% macro delete_stale_benchmarks(table) %}
{#- Pre-hook of a staging model over `table`'s files: delete the rows of every benchmark whose file changed or is gone. -#}
{%- if execute and is_incremental() -%}
    {%- set files = benchmark_files(table) -%}
    {%- set stale = [] -%}
    {%- for benchmark, file_hash in built_file_hashes().items() if files.get(benchmark, {}).get('hash') != file_hash -%}
        {%- do stale.append(benchmark) -%}
    {%- endfor -%}
    {%- if stale -%}
        delete from {{ this }} where benchmark in ({% for benchmark in stale %}'{{ benchmark | replace("'", "''") }}'{{ ", " if not loop.last }}{% endfor %})
    {%- endif -%}
{%- endif -%}
{% endmacro %}

{% macro delete_benchmarks_read_anew(upstream) %}
{#- Pre-hook of a model aggregating a staging model by benchmark (`upstream`, which has source_file_hash):
    delete the benchmarks whose file the staging model read anew, or that it no longer has. -#}
{%- if is_incremental() -%}
delete from {{ this }} where benchmark not in (
    select built.benchmark
    from (select distinct benchmark, source_file_hash from {{ this }}) as built
    inner join (select distinct benchmark, source_file_hash from {{ upstream }}) as read_now
        on built.benchmark = read_now.benchmark and built.source_file_hash = read_now.source_file_hash
)
{%- endif -%}
{% endmacro %}
