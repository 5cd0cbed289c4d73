-- WORKBank worker survey: one row per worker response (automation desire 1-5, Human Agency Scale level 1-5).
select task_id, occupation_title, user_id, response_date, automation_desire, human_agency_scale
from {{ ref('stg_workbank__worker_desires') }}
