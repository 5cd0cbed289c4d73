-- Employment and wage bill of each O*NET occupation that has tasks (docs/method.md §2).
-- O*NET-SOC -> OEWS through the BLS NEM crosswalk, which resolves OEWS aggregate codes (13-1020 ...).
-- Where several O*NET occupations with tasks share one OEWS code, its employment is split equally
-- among them (var employment_split = 'equal'; 'none' gives each the whole, and double-counts).
with task_occupations as (
    select onet_soc_code, count(*) as n_tasks
    from {{ ref('stg_onet__task_statements') }}
    group by onet_soc_code
),

mapped as (
    select t.onet_soc_code, t.n_tasks, x.oews_code
    from task_occupations as t
    left join {{ ref('stg_bls__onet_oews_crosswalk') }} as x using (onet_soc_code)
),

sharing as (
    select oews_code, count(*) as n_onet_sharing
    from mapped
    where oews_code is not null
    group by oews_code
),

joined as (
    select
        m.onet_soc_code,
        m.n_tasks,
        m.oews_code,
        o.oews_title,
        s.n_onet_sharing,
        {% if var('employment_split') == 'equal' %}
            o.employment::double / s.n_onet_sharing as employment,
        {% else %}
            o.employment::double as employment,
        {% endif %}
        o.hourly_mean_wage,
        o.annual_mean_wage,
        coalesce(o.hourly_mean_wage_topcoded, false) or coalesce(o.annual_mean_wage_topcoded, false) as wage_topcoded
    from mapped as m
    left join sharing as s using (oews_code)
    left join {{ ref('int_oews_detailed') }} as o using (oews_code)
)

select
    *,
    case
        when hourly_mean_wage is not null then employment * hourly_mean_wage * {{ var('hours_per_year') }}
        else employment * annual_mean_wage
    end as wage_bill
from joined
