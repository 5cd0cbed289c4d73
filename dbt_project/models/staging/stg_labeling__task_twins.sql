-- Near-identical task statements of different occupations, one row per ordered pair (both directions).
select
    cast(task_id as integer) as task_id,
    cast(twin_task_id as integer) as twin_task_id,
    cast(cosine as double) as cosine
from {{ source('labeling', 'task_twins') }}
