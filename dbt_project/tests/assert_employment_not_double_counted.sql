-- Split employment adds back to the OEWS detailed rows it came from (no code counted twice).
with used as (select distinct oews_code from {{ ref('dim_occupation') }} where oews_code is not null)
select 1
from (select sum(employment) as total from {{ ref('dim_occupation') }}) as split
cross join (
    select sum(o.employment) as total
    from {{ ref('int_oews_detailed') }} as o inner join used using (oews_code)
) as source
where '{{ var("employment_split") }}' = 'equal' and abs(split.total - source.total) > 0.5
