-- Per SOC major group (22 families): occupations with coverage, tasks covered, hours uncovered.
select
    f.family_code,
    f.family_title,
    count(o.onet_soc_code) as n_occupations,
    count(o.onet_soc_code) filter (where o.has_coverage) as n_occupations_with_coverage,
    coalesce(sum(o.n_tasks), 0) as n_tasks,
    coalesce(sum(o.n_tasks_covered), 0) as n_tasks_covered,
    -- Ordered sums: a double sum in thread order differs in its last bits from run to run.
    sum(o.hours order by o.onet_soc_code) as hours,
    sum(o.hours_uncovered order by o.onet_soc_code) as hours_uncovered
from {{ ref('dim_family') }} as f
left join {{ ref('fct_occupation_coverage') }} as o using (family_code)
group by f.family_code, f.family_title
