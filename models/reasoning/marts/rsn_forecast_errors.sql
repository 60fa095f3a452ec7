with

{# one row per (suite run, system, condition): counts, means and intervals #}
errors as (
    select * from {{ ref('int_rsn_forecast_intervals') }}
),

final as (
    select
        cast(errors.suite_run_id as varchar) as suite_run_id,
        cast(errors.system_id as varchar) as system_id,
        cast(errors.condition as varchar) as condition,
        cast(errors.system_kind as varchar) as system_kind,
        cast(errors.n_items as integer) as n_items,
        cast(errors.n_unanswered as integer) as n_unanswered,
        cast(errors.n_unparseable as integer) as n_unparseable,
        cast(coalesce(errors.n_scored, 0) as integer) as n_scored,
        cast(coalesce(errors.n_scored, 0) / errors.n_items as double) as coverage,
        cast(errors.mae as double) as mae,
        cast(errors.mae_ci_low as double) as mae_ci_low,
        cast(errors.mae_ci_high as double) as mae_ci_high,
        cast(errors.mse as double) as mse,
        cast(errors.mse_ci_low as double) as mse_ci_low,
        cast(errors.mse_ci_high as double) as mse_ci_high,
        cast(errors.mae_parsed as double) as mae_parsed,
        cast(errors.mae_minmax as double) as mae_minmax,
        cast(errors.mae_minmax_ci_low as double) as mae_minmax_ci_low,
        cast(errors.mae_minmax_ci_high as double) as mae_minmax_ci_high,
        cast(errors.mse_minmax as double) as mse_minmax,
        cast(errors.baseline_mae as double) as baseline_mae,
        cast(errors.baseline_mse as double) as baseline_mse,
        cast(errors.baseline_mae_minmax as double) as baseline_mae_minmax,
        cast(case when errors.baseline_mae > 0 then 1 - errors.mae / errors.baseline_mae end as double)
            as mae_skill,
        cast(errors.n_samples as integer) as n_samples,
        cast(errors.n_usable_samples as integer) as n_usable_samples,
        cast(errors.crps as double) as crps,
        cast(errors.crps_ci_low as double) as crps_ci_low,
        cast(errors.crps_ci_high as double) as crps_ci_high,
        cast(errors.crps_minmax as double) as crps_minmax,
        cast(errors.crps_minmax_ci_low as double) as crps_minmax_ci_low,
        cast(errors.crps_minmax_ci_high as double) as crps_minmax_ci_high,
    from errors
)

select * from final
