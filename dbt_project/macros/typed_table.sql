{#-
  One judge's table of one kind (labels, judgements), its columns cast to their types: the judge's
  per-benchmark files (benchmark_table, by_benchmark.sql). The source() call in the staging model
  registers lineage at parse time; at run time a judge that has never run (the LLM judge without a
  key) has no file, and the result is then empty with the same columns, instead of failing the build.
-#}
{% macro judge_columns(kind) %}
{%- if kind == 'labels' -%}
{{ return([('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('task_id', 'integer'), ('rank', 'integer'),
           ('score', 'double precision'), ('labeler', 'varchar'), ('prompt_hash', 'varchar')]) }}
{%- else -%}
{{ return([('benchmark', 'varchar'), ('prompt_id', 'varchar'), ('labeler', 'varchar'), ('prompt_hash', 'varchar'),
           ('status', 'varchar'), ('reason', 'varchar'), ('n_labels', 'integer'), ('confidence', 'double precision')]) }}
{%- endif -%}
{% endmacro %}

{% macro judge_table(relation, kind) %}
{{- benchmark_table(relation, judge_columns(kind)) -}}
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
