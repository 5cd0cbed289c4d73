-- US work hours per year on each task of an occupation with employment: employment x hours per year x time share.
select task_id, onet_soc_code, time_share, employment, hours
from {{ ref('int_task_hours') }}
