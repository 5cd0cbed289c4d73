-- Share of US work time on tasks with n_prompts < threshold (occupations with employment only).
{% set thresholds = (var('sensitivity_thresholds') + [var('coverage_threshold')]) | unique | list | sort %}
with tasks as (
    select h.task_id, h.hours, c.n_prompts
    from {{ ref('fct_task_hours') }} as h
    inner join {{ ref('fct_task_coverage') }} as c using (task_id)
    where h.employment is not null
),

thresholds as (
    select unnest([{{ thresholds | join(', ') }}]) as threshold
)

select
    t.threshold,
    -- Ordered sums: a double sum in thread order differs in its last bits from run to run.
    sum(k.hours order by k.task_id) as hours_total,
    coalesce(sum(k.hours order by k.task_id) filter (where k.n_prompts < t.threshold), 0) as hours_uncovered,
    coalesce(sum(k.hours order by k.task_id) filter (where k.n_prompts < t.threshold), 0)
    / sum(k.hours order by k.task_id) as share_uncovered
from thresholds as t
cross join tasks as k
group by t.threshold
order by t.threshold
