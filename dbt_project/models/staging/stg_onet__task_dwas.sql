select
    onet_soc_code,
    title as occupation_title,
    task_id::integer as task_id,
    task,
    dwa_id,
    dwa_title,
    rating_date,
    domain_source
from {{ source('raw', 'onet_task_dwas') }}
