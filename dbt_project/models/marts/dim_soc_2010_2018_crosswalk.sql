-- BLS SOC 2010 -> SOC 2018 crosswalk, many-to-many (remaps the telework scores).
select soc_2010_code, soc_2010_title, soc_2018_code, soc_2018_title
from {{ ref('stg_bls__soc_2010_2018_crosswalk') }}
