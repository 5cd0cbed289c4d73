-- Detailed OEWS rows only: seven codes also appear as broad rows, and counting both double-counts 6.4 M jobs.
select
    oews_code,
    oews_title,
    employment,
    hourly_mean_wage,
    hourly_mean_wage_topcoded,
    annual_mean_wage,
    annual_mean_wage_topcoded,
    annual_only,
    hourly_only
from {{ ref('stg_bls__oews_national') }}
where occupation_level = 'detailed'
