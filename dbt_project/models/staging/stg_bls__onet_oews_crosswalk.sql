select onet_soc_code, onet_soc_title, oews_code, oews_title
from {{ source('raw', 'onet_oews_crosswalk') }}
