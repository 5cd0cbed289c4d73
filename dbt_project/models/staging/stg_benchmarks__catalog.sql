-- The benchmarks of this run (one per partition) and the error of a rejected file. Reading it makes
-- `dbt build` run after raw/benchmark_catalog, which deletes the rows of benchmarks that left.
select
    cast(benchmark as varchar) as benchmark,
    cast(n_prompts as integer) as n_prompts,
    cast(error as varchar) as error,
    cast(full_name as varchar) as full_name,
    cast(licence as varchar) as licence
from {{ source('raw', 'benchmark_catalog') }}
