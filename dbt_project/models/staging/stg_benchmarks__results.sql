select benchmark, model, prompt_id, score::double as score, extra
from {{ source('raw', 'benchmark_results') }}
