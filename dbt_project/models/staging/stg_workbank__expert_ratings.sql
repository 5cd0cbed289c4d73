select
    task_id::integer as task_id, occupation_title, user_id, response_date,
    automation_capacity::double as automation_capacity, human_agency_scale::integer as human_agency_scale
from {{ source('raw', 'workbank_expert_ratings') }}
