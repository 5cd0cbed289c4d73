select
    onet_soc_code,
    title as occupation_title,
    reported_title,
    shown_in_my_next_move::boolean as shown_in_my_next_move
from {{ source('raw', 'onet_reported_titles') }}
