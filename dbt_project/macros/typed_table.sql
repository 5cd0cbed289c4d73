{#-
  One judge's table of one kind (labels, judgements, the default judge's candidates), its columns cast to their types: the judge's
  per-benchmark files (benchmark_table, by_benchmark.sql), with the columns its source declares
  (source_columns). The source() call in the staging model registers lineage at parse time; at run
  time a judge that has never run (the LLM judge without a key) has no file, and the result is then
  empty with the same columns, instead of failing the build.
-#}
{% macro judge_table(relation) %}
{{- benchmark_table(relation, source_columns(relation)) -}}
{% endmacro %}

{#-
  The columns a source table declares (models/staging/__sources.yml: each column's name and
  data_type), in their order, as (name, SQL type) pairs: for a table written outside dbt whose
  declaration the writer reads too (labeling/label_tables.py reads the judge tables'). dbt fills
  `graph` only at run time; while it parses, no SQL runs and this is empty. A source table that
  declares no column, or a column without a type, is an error, not an empty select.
-#}
{% macro source_columns(relation) %}
{%- set columns = [] -%}
{%- if execute -%}
    {%- set found = graph.sources.values() | selectattr('schema', 'equalto', relation.schema)
                    | selectattr('identifier', 'equalto', relation.identifier) | list -%}
    {%- if found | length != 1 -%}
        {{ exceptions.raise_compiler_error("source_columns: " ~ (found | length) ~ " source tables are " ~ relation.schema ~ "." ~ relation.identifier) }}
    {%- endif -%}
    {%- for column in found[0].columns.values() -%}
        {%- if not column.data_type -%}
            {{ exceptions.raise_compiler_error("source_columns: " ~ relation.identifier ~ "." ~ column.name ~ " declares no data_type") }}
        {%- endif -%}
        {%- do columns.append((column.name, column.data_type)) -%}
    {%- endfor -%}
    {%- if not columns -%}
        {{ exceptions.raise_compiler_error("source_columns: " ~ relation.schema ~ "." ~ relation.identifier ~ " declares no columns") }}
    {%- endif -%}
{%- endif -%}
{{ return(columns) }}
{% endmacro %}

{#-
  A table a Dagster asset writes outside dbt, its columns cast to their types; empty, with the same
  columns, while the asset has not run yet: the relation does not exist or, for an external source
  (per-benchmark Parquet files, meta.external_location), no file of it does yet. An incremental
  model over per-benchmark files reads them with benchmark_table (by_benchmark.sql) instead.
-#}
{% macro typed_table(relation, columns) %}
{%- set found = none -%}
{%- if execute -%}
    {%- if relation.external -%}
        {%- set n_files = run_query("select count(*) from glob('" ~ relation.identifier ~ "/*.parquet')").columns[0].values()[0] -%}
        {%- set found = relation if n_files > 0 else none -%}
    {%- else -%}
        {%- set found = adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) -%}
    {%- endif -%}
{%- endif -%}
{%- if found is none %}
select {% for name, type in columns %}cast(null as {{ type }}) as {{ name }}{{ ", " if not loop.last }}{% endfor %}
where false
{%- else %}
select {% for name, type in columns %}cast({{ name }} as {{ type }}) as {{ name }}{{ ", " if not loop.last }}{% endfor %}
from {{ relation }}
{%- endif %}
{% endmacro %}
