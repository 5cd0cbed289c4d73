select onet_soc_code, title, description
from {{ source('raw', 'onet_occupations') }}
