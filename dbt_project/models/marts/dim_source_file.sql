-- One row per file the warehouse's raw tables hold rows of: what the run was built from.
select file, bytes, sha256, raw_table, benchmark
from {{ ref('stg_sources__files') }}
