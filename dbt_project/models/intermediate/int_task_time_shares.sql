-- Work-time share of every task within its occupation (docs/method.md §2), rules in order:
--  (a) in an occupation with some estimates, a task without one gets the occupation's median share;
--  (b) in an occupation with no estimate, shares are proportional to importance (equal where missing);
--  (c) rescale so that every occupation's shares sum to 1.
-- Hours per day sum to 7 within an occupation: hours / 7 is the task's share of working time.
with estimates as (
    select
        task_id,
        onet_soc_code,
        hours_per_day / {{ var('hours_per_day') }} as time_share_estimate
    from {{ ref('stg_timeshare__task_time_shares') }}
),

base as (
    select t.task_id, t.onet_soc_code, e.time_share_estimate, i.importance
    from {{ ref('stg_onet__task_statements') }} as t
    left join estimates as e using (task_id, onet_soc_code)
    left join {{ ref('stg_onet__task_importance') }} as i using (task_id, onet_soc_code)
),

occupations as (
    select
        onet_soc_code,
        count(time_share_estimate) as n_estimates,
        median(time_share_estimate) as median_estimate,
        avg(importance) as mean_importance
    from base
    group by onet_soc_code
),

unscaled as (
    select
        b.task_id,
        b.onet_soc_code,
        b.time_share_estimate,
        case
            when b.time_share_estimate is not null then 'estimate'
            when o.n_estimates > 0 then 'occupation_median'
            else 'importance'
        end as time_share_method,
        case
            when b.time_share_estimate is not null then b.time_share_estimate
            when o.n_estimates > 0 then o.median_estimate
            else coalesce(b.importance, o.mean_importance, 1.0)
        end as share_unscaled
    from base as b
    inner join occupations as o using (onet_soc_code)
)

select
    task_id,
    onet_soc_code,
    time_share_estimate,
    -- An ordered frame fixes the order of the sum: with several DuckDB threads an unordered window
    -- sum differed in its last bits between runs.
    share_unscaled / sum(share_unscaled) over (
        partition by onet_soc_code order by task_id rows between unbounded preceding and unbounded following
    ) as time_share,
    time_share_method,
    time_share_method <> 'estimate' as time_share_imputed
from unscaled
