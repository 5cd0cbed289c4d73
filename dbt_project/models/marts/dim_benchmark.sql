-- The benchmarks of this run (one per partition), with the error of a file the run rejected, and
-- who made each and under which licence.
select benchmark, n_prompts, error, full_name, licence
from {{ ref('stg_benchmarks__catalog') }}
