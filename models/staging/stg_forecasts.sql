with

source as (
    select * from {{ source('raw', 'forecasts') }}
),

renamed as (
    select
        cast(run_id as varchar) as computed_by_run_id,
        cast(partition_key as varchar) as partition_key,
        cast(system_id as varchar) as system_id,
        cast(ticker as varchar) as ticker,
        cast(window_end_date as date) as window_end_date,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(horizon_step as integer) as horizon_step,
        cast(forecast as double) as forecast,
    from source
)

select * from renamed
