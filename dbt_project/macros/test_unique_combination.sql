{#-
  A generic test: no two rows share the combination of `columns` (dbt_utils is not installed offline).
  Rows are first grouped by one 64-bit hash of the combination, then only the rows whose hash repeats
  are grouped by the columns themselves: equal combinations hash alike, so every duplicate is found,
  and a hash collision alone fails nothing. Grouping 29.5 M candidate rows by five columns took 5.9 s
  at a million prompts, by their hash 2.7 s (medians of 3, measured by hand).
-#}
{% test unique_combination_of_columns(model, columns) %}
{%- set combination = columns | join(', ') -%}
with repeated_hashes as (
    select hash({{ combination }}) as combination_hash
    from {{ model }}
    group by combination_hash
    having count(*) > 1
)

select {{ combination }}, count(*) as n
from {{ model }}
where hash({{ combination }}) in (select combination_hash from repeated_hashes)
group by {{ combination }}
having count(*) > 1
{% endtest %}
