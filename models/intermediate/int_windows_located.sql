{#- Each window of the selected run with its position in the price series, its last clean
    context value and its MASE scale: the mean absolute one-step change over the clean
    context (context_length - 1 changes, all inside the context). -#}
with

selected_run as (
    select run_id, context_length from {{ ref('int_runs_selected') }}
),

windows as (
    select * from {{ ref('stg_windows') }}
),

prices as (
    select * from {{ ref('int_prices_indexed') }}
),

located as (
    select
        windows.run_id,
        windows.ticker,
        windows.window_index,
        windows.window_end_date,
        windows.context_start_date,
        windows.horizon_end_date,
        selected_run.context_length,
        window_end.trading_day_index as end_index,
        window_end.close as last_context_value,
    from windows
    inner join selected_run on selected_run.run_id = windows.run_id
    inner join prices as window_end
        on window_end.ticker = windows.ticker
        and window_end.price_date = windows.window_end_date
),

scaled as (
    select
        located.run_id,
        located.ticker,
        located.window_end_date,
        avg(context.abs_one_step_change) as mase_scale,
        count(*) as n_context_changes,
    from located
    inner join prices as context
        on context.ticker = located.ticker
        and context.trading_day_index between located.end_index - located.context_length + 2
            and located.end_index
    group by all
),

final as (
    select
        located.*,
        scaled.mase_scale,
        scaled.n_context_changes,
    from located
    inner join scaled using (run_id, ticker, window_end_date)
)

select * from final
