{{ config(
    materialized='table',
    pre_hook="set preserve_insertion_order = false",
    post_hook="set preserve_insertion_order = true",
) }}
{#- A table, not a view like the other intermediate models: its window function (lag over each
    forecast window) runs once, and its grain test and window_errors each read plain rows. As
    a view, the grain test's aggregate ran on top of the window and ran out of DuckDB's
    memory limit at 100 tickers x 10 years (58M rows); each step alone spills to disk.
    Insertion order is not kept while it is written (nothing reads its rows in order): at
    500 tickers x 10 years (290M rows) keeping it made the write run out of DuckDB's 4 GB,
    without it the same write stays at the limit and spills. -#}
{#- One row per forecast step with its clean actual, residual and the per-step terms of the
    accuracy metrics. Residual = forecast - actual. SMAPE term (eq. 4, 0-2 scale) =
    |actual - forecast| / ((|actual| + |forecast|) / 2), 0 when both are 0. Sign match
    (eq. 6): sign(forecast_t - forecast_{t-1}) = sign(actual_t - actual_{t-1}), where
    step 1 compares with the last (clean) context value for both. -#}
with

forecasts as (
    select * from {{ ref('int_forecasts_selected') }}
),

windows as (
    select * from {{ ref('int_windows_located') }}
),

run_days as (
    select * from {{ ref('int_run_days') }}
),

located as (
    select
        forecasts.run_id,
        forecasts.partition_key,
        forecasts.system_id,
        forecasts.ticker,
        forecasts.window_end_date,
        forecasts.perturbation_id,
        forecasts.horizon_step,
        forecasts.forecast,
        windows.end_position + forecasts.horizon_step as target_position,
        windows.last_context_value,
        windows.mase_scale,
    from forecasts
    inner join windows
        on windows.run_id = forecasts.run_id
        and windows.ticker = forecasts.ticker
        and windows.window_end_date = forecasts.window_end_date
),

{#- The target of step h is the h-th day after the origin in the run's own series
    (int_run_days) and its clean close there: counted in raw.prices instead, a day merged
    into the history after the run would move the step onto the next trading day. The day
    is joined on a plain column (target_position): with the sum written inside the join
    condition DuckDB hashed on ticker alone and filtered every forecast against every day of
    its ticker, a cost quadratic in the study's length. -#}
joined as (
    select
        located.run_id,
        located.partition_key,
        located.system_id,
        located.ticker,
        located.window_end_date,
        located.perturbation_id,
        located.horizon_step,
        actual.price_date as target_date,
        located.forecast,
        actual.clean_value as actual,
        located.last_context_value,
        located.mase_scale,
    from located
    inner join run_days as actual
        on actual.run_id = located.run_id
        and actual.ticker = located.ticker
        and actual.study_position = located.target_position
),

{#- The previous step's forecast and actual: the row before in the stored partition (one
    system, ticker and perturbation), ordered by window and step, when it belongs to the same
    window; at step 1 the last clean context value. Partitioning the window function by the
    partition key instead of by each forecast window is about 4x faster at scale (hundreds of
    large partitions to sort instead of millions of tiny ones). -#}
with_previous as (
    select
        *,
        case
            when lag(window_end_date) over step_order = window_end_date
                then lag(forecast) over step_order
            else last_context_value
        end as previous_forecast,
        case
            when lag(window_end_date) over step_order = window_end_date
                then lag(actual) over step_order
            else last_context_value
        end as previous_actual,
    from joined
    window step_order as (
        partition by run_id, partition_key
        order by window_end_date, horizon_step
    )
),

final as (
    select
        run_id,
        partition_key,
        system_id,
        ticker,
        window_end_date,
        perturbation_id,
        horizon_step,
        target_date,
        forecast,
        actual,
        forecast - actual as residual,
        abs(forecast - actual) as abs_residual,
        case
            when abs(actual) + abs(forecast) = 0 then 0.0
            else abs(actual - forecast) / ((abs(actual) + abs(forecast)) / 2.0)
        end as smape_term,
        sign(forecast - previous_forecast) = sign(actual - previous_actual) as is_sign_match,
        mase_scale,
    from with_previous
)

select * from final
