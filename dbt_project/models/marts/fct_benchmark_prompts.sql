-- Every benchmark prompt's identity and text hash (the text itself stays in staging and raw).
select benchmark, prompt_id, prompt_hash, prompt_chars
from {{ ref('stg_benchmarks__prompts') }}
