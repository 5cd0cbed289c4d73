-- n_prompts(task) = distinct prompts labeled with the task over all benchmarks; covered when >= threshold.
with counts as (
    select
        task_id,
        count(distinct benchmark || chr(31) || prompt_id) as n_prompts,
        count(distinct benchmark) as n_benchmarks
    from {{ ref('fct_prompt_task_labels') }}
    group by task_id
)

select
    d.task_id,
    coalesce(c.n_prompts, 0) as n_prompts,
    coalesce(c.n_benchmarks, 0) as n_benchmarks,
    coalesce(c.n_prompts, 0) >= {{ var('coverage_threshold') }} as covered
from {{ ref('dim_task') }} as d
left join counts as c using (task_id)
