-- Estimated hours per day each task takes, per occupation (Estimating-Time-Spent-On-Work).
select
    task_id::integer as task_id,
    onet_soc_code,
    hours_per_day::double as hours_per_day
from {{ source('raw', 'task_time_shares') }}
