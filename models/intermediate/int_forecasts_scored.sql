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

prices as (
    select * from {{ ref('int_prices_indexed') }}
),

joined as (
    select
        forecasts.run_id,
        forecasts.system_id,
        forecasts.ticker,
        forecasts.window_end_date,
        forecasts.perturbation_id,
        forecasts.horizon_step,
        actual.price_date as target_date,
        forecasts.forecast,
        actual.close as actual,
        windows.last_context_value,
        windows.mase_scale,
    from forecasts
    inner join windows
        on windows.run_id = forecasts.run_id
        and windows.ticker = forecasts.ticker
        and windows.window_end_date = forecasts.window_end_date
    inner join prices as actual
        on actual.ticker = forecasts.ticker
        and actual.trading_day_index = windows.end_index + forecasts.horizon_step
),

with_previous as (
    select
        *,
        coalesce(
            lag(forecast) over step_order, last_context_value
        ) as previous_forecast,
        coalesce(
            lag(actual) over step_order, last_context_value
        ) as previous_actual,
    from joined
    window step_order as (
        partition by run_id, system_id, ticker, window_end_date, perturbation_id
        order by horizon_step
    )
),

final as (
    select
        run_id,
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
