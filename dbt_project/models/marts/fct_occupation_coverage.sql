-- Per occupation: tasks covered, and US work hours on covered and uncovered tasks.
with tasks as (
    select d.task_id, d.onet_soc_code, c.covered, h.hours
    from {{ ref('dim_task') }} as d
    inner join {{ ref('fct_task_coverage') }} as c using (task_id)
    left join {{ ref('fct_task_hours') }} as h using (task_id, onet_soc_code)
)

select
    o.onet_soc_code,
    o.family_code,
    count(*) as n_tasks,
    count(*) filter (where t.covered) as n_tasks_covered,
    count(*) filter (where t.covered)::double / count(*) as share_tasks_covered,
    bool_or(t.covered) as has_coverage,
    any_value(o.employment) as employment,
    -- Ordered sums: a double sum in thread order differs in its last bits from run to run.
    sum(t.hours order by t.task_id) as hours,
    coalesce(sum(t.hours order by t.task_id) filter (where not t.covered), 0) as hours_uncovered
from {{ ref('dim_occupation') }} as o
inner join tasks as t using (onet_soc_code)
group by o.onet_soc_code, o.family_code
