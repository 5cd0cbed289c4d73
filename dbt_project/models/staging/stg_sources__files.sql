-- The files the raw tables were loaded from, as each load recorded them.
select
    cast(file as varchar) as file,
    cast(bytes as bigint) as bytes,
    cast(sha256 as varchar) as sha256,
    cast(raw_table as varchar) as raw_table,
    cast(benchmark as varchar) as benchmark
from {{ source('raw', 'source_files') }}
