select
    element_id,
    element_name,
    iwa_id,
    iwa_title,
    dwa_id,
    dwa_title
from {{ source('raw', 'onet_dwa_reference') }}
