-- The benchmarks of this run (one per partition), with the error of a file the run rejected, who
-- made each and under which licence, and the instruction text its harness wraps around every prompt
-- (the judges' evidence of the work), with where that text came from.
select
    c.benchmark,
    c.n_prompts,
    c.error,
    c.full_name,
    c.licence,
    i.kind as instruction_kind,
    i.instruction,
    coalesce(
        i.source_repo || '@' || i.source_commit || ':' || i.source_path,
        'pypi:' || i.pypi_package || '==' || i.pypi_version || ':' || i.pypi_path
    ) as instruction_source,
    i.licence as instruction_licence
from {{ ref('stg_benchmarks__catalog') }} as c
left join {{ ref('stg_benchmarks__instructions') }} as i on c.benchmark = i.benchmark
