-- The benchmarks of this run (one per partition), with the error of a file the run rejected.
select benchmark, n_prompts, error
from {{ ref('stg_benchmarks__catalog') }}
