-- Where each benchmark's prompts land (#38): one row per (benchmark, occupation) that the top-ranked
-- label of one of its labeled prompts falls in, with the number of such prompts and their share of
-- the benchmark's labeled prompts (active labeler). A prompt counts once, for its rank-1 label.
with top_labels as (
    select
        l.benchmark,
        l.prompt_id,
        t.onet_soc_code,
        t.family_code
    from {{ ref('fct_prompt_task_labels') }} as l
    inner join {{ ref('dim_task') }} as t using (task_id)
    where l.rank = 1
),

labeled as (
    select
        benchmark,
        count(*) as n_prompts_labeled
    from top_labels
    group by benchmark
),

landing as (
    select
        benchmark,
        onet_soc_code,
        family_code,
        count(*) as n_prompts_top1
    from top_labels
    group by benchmark, onet_soc_code, family_code
)

select
    landing.benchmark,
    landing.onet_soc_code,
    o.title as occupation_title,
    landing.family_code,
    f.family_title,
    landing.n_prompts_top1,
    labeled.n_prompts_labeled,
    landing.n_prompts_top1 / labeled.n_prompts_labeled as share_of_labeled,
    row_number() over (
        partition by landing.benchmark order by landing.n_prompts_top1 desc, landing.onet_soc_code
    ) as occupation_rank
from landing
inner join labeled using (benchmark)
inner join {{ ref('dim_occupation') }} as o on landing.onet_soc_code = o.onet_soc_code
inner join {{ ref('dim_family') }} as f on landing.family_code = f.family_code
