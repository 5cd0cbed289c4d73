select task_id::integer as task_id, onet_soc_code, human_exposure, gpt4_exposure
from {{ source('raw', 'eloundou_task_exposure') }}
