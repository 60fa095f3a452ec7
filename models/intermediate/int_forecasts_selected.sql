with

selected_run as (
    select run_id from {{ ref('int_runs_selected') }}
),

run_partitions as (
    select * from {{ ref('int_run_partitions_selected') }}
),

forecasts as (
    select * from {{ ref('stg_forecasts') }}
),

failures as (
    select * from {{ ref('stg_forecast_failures') }}
),

{#- A window that any system of the run failed to forecast (raw.forecast_failures) is left
    out for every system and perturbation, so all systems are scored on the same windows
    and each system's counterfactual grid (every window under every perturbation) stays
    complete for the robustness marts. marts.forecast_failures_summary counts them. -#}
failed_windows as (
    select distinct
        failures.ticker,
        failures.window_end_date,
    from selected_run
    inner join run_partitions on run_partitions.run_id = selected_run.run_id
    inner join failures on failures.partition_key = run_partitions.partition_key
),

final as (
    select
        selected_run.run_id,
        forecasts.computed_by_run_id,
        forecasts.partition_key,
        forecasts.system_id,
        forecasts.ticker,
        forecasts.window_end_date,
        forecasts.perturbation_id,
        forecasts.horizon_step,
        forecasts.forecast,
    from selected_run
    inner join run_partitions on run_partitions.run_id = selected_run.run_id
    inner join forecasts on forecasts.partition_key = run_partitions.partition_key
    anti join failed_windows
        on failed_windows.ticker = forecasts.ticker
        and failed_windows.window_end_date = forecasts.window_end_date
)

select * from final
