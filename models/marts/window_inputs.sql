{{ config(materialized='view') }}
{#- What each system received: one row per ticker, window, perturbation and context step
    of the selected run (a view over raw.perturbed_inputs; filter before you select). -#}
with

windows as (
    select * from {{ ref('int_windows_located') }}
),

inputs as (
    select * from {{ ref('stg_perturbed_inputs') }}
),

final as (
    select
        windows.run_id,
        windows.ticker,
        windows.window_end_date,
        inputs.perturbation_id,
        cast(row_number() over (
            partition by windows.run_id, windows.ticker, windows.window_end_date, inputs.perturbation_id
            order by inputs.price_date
        ) as integer) as context_step,
        inputs.price_date,
        inputs.clean_value,
        inputs.input_value,
        inputs.is_perturbed,
    from windows
    inner join inputs
        on inputs.run_id = windows.run_id
        and inputs.ticker = windows.ticker
        and inputs.price_date between windows.context_start_date and windows.window_end_date
)

select * from final
