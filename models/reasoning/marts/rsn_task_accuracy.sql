with

responses as (
    select * from {{ ref('int_rsn_responses_scored') }}
    where task <> 'forecast'
),

by_condition as (
    select
        suite_run_id,
        task, system_id,
        condition,
        any_value(system_kind) as system_kind,
        count(*) as n_items,
        count(*) filter (where not is_answered) as n_unanswered,
        count(*) filter (where is_answered and not parse_ok) as n_unparseable,
        avg(case when is_correct then 1.0 else 0.0 end) as accuracy,
        avg(1.0 / n_options) as chance_level,
    from responses
    group by suite_run_id, task, system_id, condition
),

-- the series is the sampled unit: several questions about one imported series are not
-- independent, so the Wilson interval takes the effective counts (Rao-Scott design effect)
series_counts as (
    select * from {{ clustered_counts('responses', ['suite_run_id', 'task', 'system_id', 'condition'], 'is_correct', 'series_id') }}
),

final as (
    select
        cast(w.suite_run_id as varchar) as suite_run_id,
        cast(w.task as varchar) as task,
        cast(w.system_id as varchar) as system_id,
        cast(w.system_kind as varchar) as system_kind,
        cast(w.n_items as integer) as n_items,
        cast(w.n_unanswered as integer) as n_unanswered,
        cast(w.n_unparseable as integer) as n_unparseable,
        cast(w.accuracy as double) as accuracy,
        cast({{ wilson_interval('c.successes_effective', 'c.n_effective', 'low') }} as double) as accuracy_ci_low,
        cast({{ wilson_interval('c.successes_effective', 'c.n_effective', 'high') }} as double) as accuracy_ci_high,
        cast(c.n_clusters as integer) as n_series,
        cast(c.design_effect as double) as design_effect,
        cast(w.chance_level as double) as chance_level,
        cast(w.accuracy - w.chance_level as double) as above_chance,
        cast(wo.n_items as integer) as n_items_without_series,
        cast(wo.n_unparseable as integer) as n_unparseable_without_series,
        cast(wo.n_unanswered as integer) as n_unanswered_without_series,
        cast(wo.accuracy as double) as accuracy_without_series,
        -- no usable answer in a condition: no evidence of a gap (null, not rated)
        cast(case
            when w.n_unanswered + w.n_unparseable < w.n_items
                and wo.n_unanswered + wo.n_unparseable < wo.n_items
                then w.accuracy - wo.accuracy
        end as double) as series_gap,
    from by_condition as w
    inner join series_counts as c
        on c.suite_run_id = w.suite_run_id and c.task = w.task and c.system_id = w.system_id and c.condition = w.condition
    left join by_condition as wo
        on wo.suite_run_id = w.suite_run_id
        and w.task = wo.task and w.system_id = wo.system_id
        and wo.condition = 'without_series'
    where w.condition = 'with_series'
)

select * from final
