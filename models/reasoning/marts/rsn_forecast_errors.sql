with

kinds as (
    select suite_run_id, system_id, any_value(system_kind) as system_kind,
    from {{ ref('int_rsn_responses_scored') }}
    where task = 'forecast'
    group by suite_run_id, system_id
),

{#- one row per forecast (item x condition); a sampled forecast's replies are one forecast -#}
counted as (
    select
        scored.suite_run_id,
        scored.system_id,
        scored.condition,
        any_value(kinds.system_kind) as system_kind,
        count(*) as n_items,
        count(*) filter (where not scored.is_answered) as n_unanswered,
        count(*) filter (where scored.is_answered and not scored.usable) as n_unparseable,
        sum(scored.n_samples) as n_samples,
        sum(scored.n_usable_samples) as n_usable_samples,
    from {{ ref('int_rsn_forecasts_scored') }} as scored
    left join kinds
        on kinds.suite_run_id = scored.suite_run_id and kinds.system_id = scored.system_id
    group by scored.suite_run_id, scored.system_id, scored.condition
),

errors as (
    select * from {{ ref('int_rsn_forecast_intervals') }}
),

final as (
    select
        cast(counted.suite_run_id as varchar) as suite_run_id,
        cast(counted.system_id as varchar) as system_id,
        cast(counted.condition as varchar) as condition,
        cast(counted.system_kind as varchar) as system_kind,
        cast(counted.n_items as integer) as n_items,
        cast(counted.n_unanswered as integer) as n_unanswered,
        cast(counted.n_unparseable as integer) as n_unparseable,
        cast(coalesce(errors.n_scored, 0) as integer) as n_scored,
        cast(coalesce(errors.n_scored, 0) / counted.n_items as double) as coverage,
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
        cast(counted.n_samples as integer) as n_samples,
        cast(counted.n_usable_samples as integer) as n_usable_samples,
        cast(errors.crps as double) as crps,
        cast(errors.crps_ci_low as double) as crps_ci_low,
        cast(errors.crps_ci_high as double) as crps_ci_high,
        cast(errors.crps_minmax as double) as crps_minmax,
        cast(errors.crps_minmax_ci_low as double) as crps_minmax_ci_low,
        cast(errors.crps_minmax_ci_high as double) as crps_minmax_ci_high,
    from counted
    left join errors
        on errors.suite_run_id = counted.suite_run_id
        and errors.system_id = counted.system_id
        and errors.condition = counted.condition
)

select * from final
