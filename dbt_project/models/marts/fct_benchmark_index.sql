-- One row per benchmark: its prompts, the active labeler's labels on them, and what those labels reach.
with prompts as (
    select benchmark, n_prompts, n_distinct_texts, example_prompt, example_prompt_id
    from {{ ref('int_benchmark_prompt_stats') }}
),

labels as (
    select
        l.benchmark,
        count(*) as n_labels,
        count(distinct l.prompt_id) as n_prompts_labeled,
        count(distinct l.task_id) as n_tasks_touched,
        count(distinct l.task_id) filter (where c.covered) as n_covered_tasks_touched,
        count(distinct t.onet_soc_code) as n_occupations_touched,
        count(distinct t.family_code) as n_families_reached
    from {{ ref('fct_prompt_task_labels') }} as l
    inner join {{ ref('dim_task') }} as t using (task_id)
    inner join {{ ref('fct_task_coverage') }} as c using (task_id)
    group by l.benchmark
),

judged as (
    select
        benchmark,
        count(*) filter (where status = 'abstained') as n_prompts_abstained,
        count(*) filter (where status = 'unlabeled') as n_prompts_unlabeled
    from {{ ref('fct_prompt_judgements') }}
    where labeler = '{{ var("active_labeler") }}'
    group by benchmark
)

select
    p.benchmark,
    p.n_prompts,
    p.n_distinct_texts,
    coalesce(l.n_prompts_labeled, 0) as n_prompts_labeled,
    coalesce(l.n_labels, 0) as n_labels,
    coalesce(l.n_tasks_touched, 0) as n_tasks_touched,
    coalesce(l.n_covered_tasks_touched, 0) as n_covered_tasks_touched,
    coalesce(l.n_occupations_touched, 0) as n_occupations_touched,
    coalesce(l.n_families_reached, 0) as n_families_reached,
    p.example_prompt_id,
    p.example_prompt,
    coalesce(j.n_prompts_abstained, 0) as n_prompts_abstained,
    coalesce(j.n_prompts_unlabeled, 0) as n_prompts_unlabeled
from prompts as p
left join labels as l using (benchmark)
left join judged as j using (benchmark)
