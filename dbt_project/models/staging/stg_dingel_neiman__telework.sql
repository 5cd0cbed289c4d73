select onet_soc_code, title, teleworkable::double as teleworkable
from {{ source('raw', 'onet_telework') }}
