-- Dingel-Neiman (2020) teleworkability per O*NET-SOC 2010 occupation (1 = can be done at home).
select onet_soc_code as onet_soc_2010_code, title, teleworkable
from {{ ref('stg_dingel_neiman__telework') }}
