with

selected_run as (
    select run_id from {{ ref('int_runs_selected') }}
),

run_partitions as (
    select * from {{ ref('stg_run_partitions') }}
),

forecasts as (
    select * from {{ ref('stg_forecasts') }}
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
)

select * from final
