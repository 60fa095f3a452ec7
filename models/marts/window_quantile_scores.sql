{#- One row per window of window_errors (every system), with its probabilistic metrics when
    the system gave quantile forecasts for the window, else nulls and the reason. Conventions
    (docs/probabilistic.md), over the window's horizon steps t and the 9 levels q:
    wql = 2 * sum_t,q pinball / (9 * sum_t |actual|)          (fev's WQL, one window)
    crps = 2 * sum_t,q pinball / (9 * steps)                  (quantile-based CRPS, price units)
    msis = mean_t interval score of [q10, q90] / mase_scale   (alpha = 0.2, scaled like MASE)
    coverage_80 = share of steps with q10 <= actual <= q90.
    The quantiles are scored as stored (fev's practice); n_crossed_steps counts the window's
    steps whose quantiles decrease somewhere along the levels (quantile crossing), counted in
    int_window_quantile_metrics' one pass over the steps. -#}
with

window_errors as (
    select * from {{ ref('window_errors') }}
),

per_window as (
    select * from {{ ref('int_window_quantile_metrics') }}
),

systems_with_quantiles as (
    select distinct run_id, system_id from per_window
),

final as (
    select
        window_errors.run_id,
        window_errors.system_id,
        window_errors.ticker,
        window_errors.window_end_date,
        window_errors.perturbation_id,
        cast(per_window.wql as double) as wql,
        cast(per_window.crps as double) as crps,
        cast(per_window.msis as double) as msis,
        cast(per_window.coverage_80 as double) as coverage_80,
        cast(coalesce(per_window.n_quantile_steps, 0) as integer) as n_quantile_steps,
        cast(coalesce(per_window.n_crossed_steps, 0) as integer) as n_crossed_steps,
        cast(
            case
                when per_window.system_id is not null then null
                when systems_with_quantiles.system_id is not null
                    then 'no quantile forecasts for this window (the system fell back to a point forecast)'
                else 'the system gives no quantile forecasts (or they were not stored for this run)'
            end as varchar
        ) as probabilistic_reason,
    from window_errors
    left join per_window
        on per_window.run_id = window_errors.run_id
        and per_window.system_id = window_errors.system_id
        and per_window.ticker = window_errors.ticker
        and per_window.window_end_date = window_errors.window_end_date
        and per_window.perturbation_id = window_errors.perturbation_id
    left join systems_with_quantiles
        on systems_with_quantiles.run_id = window_errors.run_id
        and systems_with_quantiles.system_id = window_errors.system_id
)

select * from final
