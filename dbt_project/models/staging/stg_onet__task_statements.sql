select
    task_id::integer as task_id,
    onet_soc_code,
    title as occupation_title,
    task,
    task_type,
    domain_source,
    substr(onet_soc_code, 1, 2) || '-0000' as family_code
from {{ source('raw', 'onet_task_statements') }}
