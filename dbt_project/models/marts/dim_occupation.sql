-- The 923 O*NET-SOC occupations that have tasks, with their family and (split) OEWS employment.
select
    e.onet_soc_code,
    o.title,
    substr(e.onet_soc_code, 1, 2) || '-0000' as family_code,
    f.family_title,
    e.n_tasks,
    e.oews_code,
    e.n_onet_sharing,
    e.employment,
    e.hourly_mean_wage,
    e.annual_mean_wage,
    e.wage_topcoded,
    e.wage_bill
from {{ ref('int_occupation_employment') }} as e
inner join {{ ref('stg_onet__occupations') }} as o using (onet_soc_code)
left join {{ ref('dim_family') }} as f on f.family_code = substr(e.onet_soc_code, 1, 2) || '-0000'
