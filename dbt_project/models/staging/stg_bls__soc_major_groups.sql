-- The SOC 2018 major groups as published (23, with 55-0000 Military Specific).
select family_code, family_title
from {{ source('raw', 'soc_major_groups') }}
