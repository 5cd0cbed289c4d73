-- Every label names a prompt that exists (benchmark, prompt_id is a composite key).
select l.benchmark, l.prompt_id
from {{ ref('fct_prompt_task_labels') }} as l
left join {{ ref('stg_benchmarks__prompts') }} as p using (benchmark, prompt_id)
where p.prompt_id is null
