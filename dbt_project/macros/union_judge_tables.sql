{#-
  Union of one kind of table (labels, judgements) over every judge whose table exists. The source()
  calls register lineage at parse time; at run time a judge that has never run (the LLM judge without
  a key) is skipped instead of failing the build.
-#}
{% macro union_judge_tables(kind, columns) %}
{%- set present = [] -%}
{%- for judge in ['embedded', 'llm'] -%}
    {%- set relation = source('labeling', judge ~ '_' ~ kind) -%}
    {%- if execute -%}
        {%- set found = adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) -%}
        {%- if found is not none -%}{%- do present.append(relation) -%}{%- endif -%}
    {%- endif -%}
{%- endfor -%}
{%- if present | length == 0 %}
select {% for name, type in columns %}cast(null as {{ type }}) as {{ name }}{{ ", " if not loop.last }}{% endfor %}
where false
{%- else -%}
{%- for relation in present %}
select {% for name, type in columns %}cast({{ name }} as {{ type }}) as {{ name }}{{ ", " if not loop.last }}{% endfor %}
from {{ relation }}
{{ "union all" if not loop.last }}
{%- endfor -%}
{%- endif -%}
{% endmacro %}
