-- Hours per day sum to 7 within an occupation: hours / 7 is the task's share of working time.
select
    task_id::integer as task_id,
    onet_soc_code,
    hours_per_day::double as hours_per_day,
    hours_per_day::double / {{ var('hours_per_day') }} as time_share_estimate
from {{ source('raw', 'task_time_shares') }}
