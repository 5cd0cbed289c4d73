select
    onet_soc_code,
    title as occupation_title,
    related_onet_soc_code,
    related_title as related_occupation_title,
    relatedness_tier,
    related_index::integer as related_index
from {{ source('raw', 'onet_related_occupations') }}
