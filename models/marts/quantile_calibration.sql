{#- One row per system, perturbation and quantile level of the selected run: the share of
    forecast steps whose clean actual is at or below the quantile forecast at that level
    (a calibrated system's share equals the level; equal up to 1e-12 of the larger value
    counts as at or below, so a tie does not hang on the price unit's rounding), pooled over every step of every window
    with quantile forecasts. A system without quantile forecasts keeps its rows, with null
    shares, n_steps = 0 and the reason (as probabilistic_scores). -#}
with

steps as (
    select * from {{ ref('int_forecast_quantiles_scored') }}
),

windows as (
    select * from {{ ref('window_quantile_scores') }}
),

long as (
    unpivot (
        select run_id, system_id, perturbation_id, actual, q10, q20, q30, q40, q50, q60, q70, q80, q90
        from steps
    )
    on q10, q20, q30, q40, q50, q60, q70, q80, q90
    into name level_column value quantile_value
),

shares as (
    select
        run_id,
        system_id,
        perturbation_id,
        substr(level_column, 2)::integer as level_pct,
        {#- at or below up to floating rounding (1e-12 relative): a tie stays a tie in any
            price unit -#}
        avg(case when actual <= quantile_value + 1e-12 * greatest(abs(actual), abs(quantile_value))
            then 1.0 else 0.0 end) as observed_share,
        count(*) as n_steps,
    from long
    group by run_id, system_id, perturbation_id, level_column
),

{#- every (system, perturbation) of the run, with or without quantiles, at every level -#}
grid as (
    select
        run_id,
        system_id,
        perturbation_id,
        levels.level_pct,
        min(probabilistic_reason) as reason,
    from windows
    cross join (values (10), (20), (30), (40), (50), (60), (70), (80), (90)) as levels (level_pct)
    group by run_id, system_id, perturbation_id, levels.level_pct
),

final as (
    select
        grid.run_id,
        grid.system_id,
        grid.perturbation_id,
        cast(grid.level_pct / 100.0 as double) as quantile_level,
        cast(shares.observed_share as double) as observed_share,
        cast(shares.observed_share - grid.level_pct / 100.0 as double) as calibration_error,
        cast(coalesce(shares.n_steps, 0) as integer) as n_steps,
        cast(case when shares.n_steps is null then grid.reason end as varchar) as reason,
    from grid
    left join shares
        on shares.run_id = grid.run_id
        and shares.system_id = grid.system_id
        and shares.perturbation_id = grid.perturbation_id
        and shares.level_pct = grid.level_pct
)

select * from final
