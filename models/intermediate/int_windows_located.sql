{{ config(materialized='table') }}
{#- Each window of the selected run with its position in the run's own series
    (int_run_days: the days the run forecast, whatever raw.prices gained since), its last
    clean context value and its MASE scale: the mean absolute one-step change over the
    clean context (context_length - 1 changes, all inside the context). end_index is the
    origin's index in the stored price history (int_prices_indexed) as it is now, null when
    the history no longer holds the origin; no mart locates days by it (a window's days are
    the run's own: end_position), and a window never depends on raw.prices still holding
    its origin.

    The sum of those changes is a difference of running sums (the running sum at the origin
    minus the one at the first context day), so every join is an equality on a plain column:
    a range join of windows against every day of their ticker costs windows x days per
    ticker, quadratic in the study's length.

    A table, not a view: five models and its own tests read it, and as a view each of them
    ran the running sums over every ticker's whole history again (about 0.2 s a read on
    the default study; BENCHMARKS.md, Session 18). -#}
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

run_days as (
    select * from {{ ref('int_run_days') }}
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
        origin.study_position as end_position,
        origin.clean_value as last_context_value,
    from windows
    inner join selected_run on selected_run.run_id = windows.run_id
    -- a left join: the run forecast the origin whatever raw.prices holds now (ingest
    -- --replace can remove a day); end_index is then null and the window stays
    left join prices as window_end
        on window_end.ticker = windows.ticker
        and window_end.price_date = windows.window_end_date
    inner join run_days as origin
        on origin.run_id = windows.run_id
        and origin.ticker = windows.ticker
        and origin.price_date = windows.window_end_date
),

running as (
    select
        run_id,
        ticker,
        study_position,
        sum(coalesce(abs_one_step_change, 0)) over days_so_far as changes_so_far,
        count(abs_one_step_change) over days_so_far as n_changes_so_far,
    from run_days
    window days_so_far as (
        partition by run_id, ticker order by study_position rows between unbounded preceding and current row
    )
),

bounded as (
    select
        run_id,
        ticker,
        window_end_date,
        end_position,
        end_position - context_length + 1 as first_context_position,
    from located
),

scaled as (
    select
        bounded.run_id,
        bounded.ticker,
        bounded.window_end_date,
        (at_end.changes_so_far - at_start.changes_so_far)
            / nullif(at_end.n_changes_so_far - at_start.n_changes_so_far, 0) as mase_scale,
        at_end.n_changes_so_far - at_start.n_changes_so_far as n_context_changes,
    from bounded
    inner join running as at_end
        on at_end.run_id = bounded.run_id
        and at_end.ticker = bounded.ticker
        and at_end.study_position = bounded.end_position
    inner join running as at_start
        on at_start.run_id = bounded.run_id
        and at_start.ticker = bounded.ticker
        and at_start.study_position = bounded.first_context_position
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
