{#- The trading days of the selected run, as the run stored them (raw.perturbed_inputs): per
    ticker, the day at each position of the study-period series the run forecast, its clean
    close and the absolute change from the day before it in that series. Windows and horizon
    steps are located in this calendar, never by counting days in raw.prices: a day merged
    into the price history after the run (an ingest adds new dates inside it) would move
    every later step of the run's windows onto the next trading day. -#}
with

selected_run as (
    select run_id from {{ ref('int_runs_selected') }}
),

inputs as (
    select * from {{ ref('stg_perturbed_inputs') }}
),

{#- every perturbation of the run stores the same clean series: one row per position -#}
days as (
    select distinct
        inputs.run_id,
        inputs.ticker,
        inputs.study_position,
        inputs.price_date,
        inputs.clean_value,
    from inputs
    inner join selected_run on selected_run.run_id = inputs.run_id
),

final as (
    select
        run_id,
        ticker,
        study_position,
        price_date,
        clean_value,
        abs(clean_value - lag(clean_value) over (
            partition by run_id, ticker order by study_position
        )) as abs_one_step_change,
    from days
)

select * from final
