select
    onet_soc_code,
    title as occupation_title,
    example,
    commodity_code::integer as commodity_code,
    commodity_title,
    hot_technology::boolean as hot_technology,
    in_demand::boolean as in_demand
from {{ source('raw', 'onet_technology_skills') }}
