-- WORKBank expert ratings: one row per expert response (automation capacity 1-5, Human Agency Scale level 1-5).
select task_id, occupation_title, user_id, response_date, automation_capacity, human_agency_scale
from {{ ref('stg_workbank__expert_ratings') }}
