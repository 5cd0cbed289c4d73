{#-
  A generic test: no two rows share the combination of `columns` (dbt_utils is not installed offline).
  One pass first compares the row count with the number of distinct 64-bit hashes of the combination:
  equal, no combination repeats and the test is done. Only otherwise are the rows grouped by that hash,
  and the rows whose hash repeats grouped by the columns themselves: equal combinations hash alike, so
  every duplicate is found, and a hash collision alone fails nothing. At a million prompts the 29.7 M
  candidate rows took 5.9 s grouped by their five columns; the test as dbt runs it took 4.0 s grouped by
  hash, then by the columns of the repeats, and 3.0 s with the count first (medians of seven alternated
  runs, by hand).
-#}
{% test unique_combination_of_columns(model, columns) %}
{%- set combination = columns | join(', ') -%}
with totals as (
    select count(*) <> count(distinct hash({{ combination }})) as any_hash_repeats
    from {{ model }}
),

repeated_hashes as (
    select hash({{ combination }}) as combination_hash
    from {{ model }}
    where (select any_hash_repeats from totals)
    group by combination_hash
    having count(*) > 1
)

select {{ combination }}, count(*) as n
from {{ model }}
where (select any_hash_repeats from totals) and hash({{ combination }}) in (select combination_hash from repeated_hashes)
group by {{ combination }}
having count(*) > 1
{% endtest %}
