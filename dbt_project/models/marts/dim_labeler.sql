-- Every labeler whose labels the warehouse holds, with its rule in words and its parameters; the
-- active one (var active_labeler) is marked: its labels feed fct_prompt_task_labels.
select
    labeler,
    rule,
    parameters,
    labeler = '{{ var("active_labeler") }}' as is_active
from {{ ref('stg_labeling__labeler_rules') }}
