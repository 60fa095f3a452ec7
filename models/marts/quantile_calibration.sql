{#- One row per system, perturbation and quantile level of the selected run: the share of
    forecast steps whose clean actual is at or below the quantile forecast at that level
    (a calibrated system's share equals the level), pooled over every step of every window
    with quantile forecasts. -#}
with

steps as (
    select * from {{ ref('int_forecast_quantiles_scored') }}
),

long as (
    unpivot (
        select run_id, system_id, perturbation_id, actual, q10, q20, q30, q40, q50, q60, q70, q80, q90
        from steps
    )
    on q10, q20, q30, q40, q50, q60, q70, q80, q90
    into name level_column value quantile_value
),

final as (
    select
        run_id,
        system_id,
        perturbation_id,
        cast(substr(level_column, 2)::integer / 100.0 as double) as quantile_level,
        cast(avg(case when actual <= quantile_value then 1.0 else 0.0 end) as double)
            as observed_share,
        cast(
            avg(case when actual <= quantile_value then 1.0 else 0.0 end)
            - substr(level_column, 2)::integer / 100.0 as double
        ) as calibration_error,
        cast(count(*) as integer) as n_steps,
    from long
    group by run_id, system_id, perturbation_id, level_column
)

select * from final
