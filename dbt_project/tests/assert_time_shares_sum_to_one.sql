-- Work-time shares sum to 1 within every occupation (docs/method.md §2, rule c), to 1e-9.
select onet_soc_code, sum(time_share) as total
from {{ ref('dim_task') }}
group by onet_soc_code
having abs(sum(time_share) - 1) > 1e-9
