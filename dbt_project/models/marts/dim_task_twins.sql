-- The same work listed in several occupations: pairs of near-identical task statements of different
-- occupations, both directions (analysis/near_duplicates.py counts labels on them three ways).
select
    p.task_id,
    p.twin_task_id,
    p.cosine
from {{ ref('stg_labeling__task_twins') }} as p
inner join {{ ref('dim_task') }} as a on p.task_id = a.task_id
inner join {{ ref('dim_task') }} as b on p.twin_task_id = b.task_id
where a.onet_soc_code != b.onet_soc_code
