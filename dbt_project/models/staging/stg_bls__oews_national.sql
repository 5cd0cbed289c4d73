-- Every OEWS May 2024 national row (total, major, minor, broad and detailed), renamed and typed.
select
    occ_code as oews_code,
    occ_title as oews_title,
    o_group as occupation_level,
    tot_emp::bigint as employment,
    h_mean::double as hourly_mean_wage,
    h_mean_topcoded as hourly_mean_wage_topcoded,
    a_mean::double as annual_mean_wage,
    a_mean_topcoded as annual_mean_wage_topcoded,
    annual_only,
    hourly_only
from {{ source('raw', 'oews_national') }}
