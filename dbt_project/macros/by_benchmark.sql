{#-
  Per-benchmark tables, built incrementally by benchmark (docs/scaling.md, "Growth costs what changed").

  Staging, over the per-benchmark Parquet files (one file per table and benchmark, partition_files.py):
  each row records the hash of the file it was read from (`source_file_hash`: the SHA-256 of the
  file's bytes, kept by the pipeline or computed by DuckDB, `benchmark_files`). A build reads
  only the files whose hash the model does not hold yet (new or changed benchmarks,
  `benchmark_table`), after its pre-hook deleted the rows of every benchmark whose file changed or is
  gone (`delete_stale_benchmarks`). A full refresh, or a first build, reads every file.

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
    from the file's footer: a file with none (a benchmark without results) has nothing to read.
    A file's hash is the SHA-256 of its bytes: the one the pipeline kept for it (partition_files.FILE_HASHES,
    written before every build) while its size and modification time are still those it was hashed
    at, else DuckDB's sha256() of its bytes, read here (a file written since or just before, dbt run by
    hand). Either way the same bytes give the same hash: the tables of two runs over the same files
    are equal whichever way each got its hashes. -#}
{%- set files = {} -%}
{%- if execute -%}
    {%- if run_query("select count(*) from glob('.file_sha256.parquet')").rows[0][0] > 0 -%}
        {%- set kept = "(select file_name, size, modified_us, sha256 from read_parquet('.file_sha256.parquet') where table_name = '" ~ table ~ "')" -%}
    {%- else -%}
        {%- set kept = "(select null::varchar as file_name, null::bigint as size, null::bigint as modified_us, null::varchar as sha256 where false)" -%}
    {%- endif -%}
    {%- set found = run_query(
        "select regexp_extract(b.filename, '([^/]+)\\.parquet$', 1), b.filename, k.sha256 from read_blob('" ~ table ~ "/*.parquet') as b left join " ~ kept ~ " as k"
        ~ " on k.file_name = regexp_extract(b.filename, '([^/]+)$', 1) and k.size = b.size and k.modified_us = epoch_us(b.last_modified)"
    ) -%}
    {%- set unhashed = [] -%}
    {%- for benchmark, path, kept_hash in found.rows if kept_hash is none -%}
        {%- do unhashed.append("'" ~ path | replace("'", "''") ~ "'") -%}
    {%- endfor -%}
    {%- set read_hashes = {} -%}
    {%- if unhashed -%}
        {#- SHA-256, as the pipeline's: the same bytes get the same hash whichever way it came -#}
        {%- for path, file_hash in run_query("select filename, sha256(content) from read_blob([" ~ unhashed | join(", ") ~ "])").rows -%}
            {%- do read_hashes.update({path: file_hash}) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if found.rows | length > 0 -%}
        {#- parquet_file_metadata, unlike read_blob, fails when no file matches -#}
        {%- set rows = {} -%}
        {%- for path, n_rows in run_query("select file_name, num_rows from parquet_file_metadata('" ~ table ~ "/*.parquet')").rows -%}
            {%- do rows.update({path: n_rows}) -%}
        {%- endfor -%}
        {%- for benchmark, path, kept_hash in found.rows -%}
            {#- a file that came between the two reads counts as having rows: it is read -#}
            {%- do files.update({benchmark: {'path': path, 'hash': kept_hash or read_hashes.get(path), 'rows': rows.get(path, 1)}}) -%}
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
