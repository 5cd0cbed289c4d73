-- Each benchmark's landing shares are a distribution: every share in (0, 1], and they sum to 1 over
-- the benchmark's occupations (every labeled prompt has one rank-1 label). Returns the benchmarks
-- that break it.
select
    benchmark,
    sum(share_of_labeled) as total_share,
    min(share_of_labeled) as smallest_share,
    max(share_of_labeled) as largest_share
from {{ ref('fct_benchmark_landing') }}
group by benchmark
having
    abs(sum(share_of_labeled) - 1) > 1e-9
    or min(share_of_labeled) <= 0
    or max(share_of_labeled) > 1
