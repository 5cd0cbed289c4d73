select benchmark, prompt_id, prompt, prompt_hash, length(prompt) as prompt_chars
from {{ source('raw', 'benchmark_prompts') }}
