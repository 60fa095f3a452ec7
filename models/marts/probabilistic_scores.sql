{#- One row per system, perturbation and probabilistic metric of the selected run: the mean,
    sample std and count over the windows that have quantile forecasts, each window weighted
    equally (as accuracy_scores). A system without quantile forecasts gets null scores, n = 0
    and the reason. n_quantile_steps and n_crossed_steps count the forecast steps with quantiles
    and those whose stored quantiles cross (decrease along the levels; scored as stored). -#}
with

windows as (
    select * from {{ ref('window_quantile_scores') }}
),

long as (
    unpivot windows
    on wql, crps, msis, coverage_80
    into name metric value metric_value
),

{#- unpivot drops null values, so the (system, perturbation) grid comes from windows -#}
grid as (
    select
        run_id,
        system_id,
        perturbation_id,
        metric,
        min(probabilistic_reason) as reason,
    from windows
    cross join (values ('wql'), ('crps'), ('msis'), ('coverage_80')) as metrics (metric)
    group by run_id, system_id, perturbation_id, metric
),

step_counts as (
    select
        run_id,
        system_id,
        perturbation_id,
        sum(n_quantile_steps) as n_quantile_steps,
        sum(n_crossed_steps) as n_crossed_steps,
    from windows
    group by run_id, system_id, perturbation_id
),

scores as (
    select
        run_id,
        system_id,
        perturbation_id,
        cast(metric as varchar) as metric,
        avg(metric_value) as mean,
        stddev_samp(metric_value) as std,
        count(metric_value) as n,
    from long
    group by run_id, system_id, perturbation_id, metric
),

final as (
    select
        grid.run_id,
        grid.system_id,
        grid.perturbation_id,
        cast(grid.metric as varchar) as metric,
        cast(scores.mean as double) as mean,
        cast(scores.std as double) as std,
        cast(coalesce(scores.n, 0) as integer) as n,
        cast(case when grid.metric = 'coverage_80' then 0.8 else 0.0 end as double) as ideal_value,
        cast(case when scores.n is null then grid.reason end as varchar) as reason,
        cast(step_counts.n_quantile_steps as integer) as n_quantile_steps,
        cast(step_counts.n_crossed_steps as integer) as n_crossed_steps,
    from grid
    left join scores
        on scores.run_id = grid.run_id
        and scores.system_id = grid.system_id
        and scores.perturbation_id = grid.perturbation_id
        and scores.metric = grid.metric
    left join step_counts
        on step_counts.run_id = grid.run_id
        and step_counts.system_id = grid.system_id
        and step_counts.perturbation_id = grid.perturbation_id
)

select * from final
