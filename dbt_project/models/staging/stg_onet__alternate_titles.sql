select
    onet_soc_code,
    title as occupation_title,
    alternate_title,
    short_title,
    sources
from {{ source('raw', 'onet_alternate_titles') }}
