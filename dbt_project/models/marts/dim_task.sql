-- One row per O*NET 29.3 task (18,796), the unit every coverage figure is counted in.
select
    t.task_id,
    t.onet_soc_code,
    t.task,
    t.task_type,
    i.importance,
    x.exposed,
    x.exposure_label,
    s.time_share,
    s.time_share_imputed,
    s.time_share_method,
    t.family_code
from {{ ref('stg_onet__task_statements') }} as t
left join {{ ref('stg_onet__task_importance') }} as i using (task_id, onet_soc_code)
left join {{ ref('int_task_exposure') }} as x using (task_id)
left join {{ ref('int_task_time_shares') }} as s using (task_id, onet_soc_code)
