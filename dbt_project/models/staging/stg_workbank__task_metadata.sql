select task_id::integer as task_id, onet_soc_code, occupation_title, task, task_type, importance::double as importance
from {{ source('raw', 'workbank_task_metadata') }}
