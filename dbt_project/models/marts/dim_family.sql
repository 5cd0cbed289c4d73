-- The 22 civilian SOC 2018 major groups: the occupation families (55-0000 Military Specific has no
-- OEWS or O*NET task data).
select family_code, family_title
from {{ ref('stg_bls__soc_major_groups') }}
where family_code <> '55-0000'
