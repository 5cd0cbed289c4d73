-- US work hours per year on each task of an occupation with employment:
-- occupation employment x hours per year (2,080) x the task's time share.
select
    s.task_id,
    s.onet_soc_code,
    s.time_share,
    e.employment,
    e.employment * {{ var('hours_per_year') }} * s.time_share as hours
from {{ ref('int_task_time_shares') }} as s
inner join {{ ref('int_occupation_employment') }} as e using (onet_soc_code)
