select task_id::integer as task_id, onet_soc_code, importance::double as importance
from {{ source('raw', 'onet_task_importance') }}
