-- BLS SOC 2010 -> 2018 crosswalk: one row per (2010 code, 2018 code) pair, many-to-many; titles keep the (#) / (##) split markers.
select
    soc_2010_code::varchar as soc_2010_code,
    soc_2010_title::varchar as soc_2010_title,
    soc_2018_code::varchar as soc_2018_code,
    soc_2018_title::varchar as soc_2018_title
from {{ source('raw', 'soc_2010_2018_crosswalk') }}
