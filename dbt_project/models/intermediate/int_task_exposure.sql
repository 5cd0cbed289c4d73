-- Binary AI exposure per task (Eloundou et al. 2023). Default: human aggregate label is E1 or E2.
-- Tasks new since O*NET 27.2 have no label: exposed is NULL.
{% set rater_column = 'human_exposure' if var('exposure_rater') == 'human' else 'gpt4_exposure' %}
{% set levels = "('E1')" if var('exposure_definition') == 'e1' else "('E1', 'E2')" %}
select
    t.task_id,
    e.{{ rater_column }} as exposure_label,
    case when e.task_id is null then null else e.{{ rater_column }} in {{ levels }} end as exposed
from {{ ref('stg_onet__task_statements') }} as t
left join {{ ref('stg_eloundou__task_exposure') }} as e using (task_id)
