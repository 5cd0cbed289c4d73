-- Detailed OEWS rows only: seven codes also appear as broad rows, and counting both double-counts 6.4 M jobs.
select
    occ_code as oews_code,
    occ_title as oews_title,
    tot_emp::bigint as employment,
    h_mean::double as hourly_mean_wage,
    h_mean_topcoded as hourly_mean_wage_topcoded,
    a_mean::double as annual_mean_wage,
    a_mean_topcoded as annual_mean_wage_topcoded,
    annual_only,
    hourly_only
from {{ source('raw', 'oews_national') }}
where o_group = 'detailed'
