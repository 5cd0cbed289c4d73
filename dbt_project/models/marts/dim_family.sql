-- The 22 civilian SOC 2018 major groups: the occupation families.
select family_code, family_title
from {{ ref('int_soc_major_groups') }}
