with

source as (
    select * from {{ source('raw', 'forecast_quantiles') }}
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
        cast(q10 as double) as q10,
        cast(q20 as double) as q20,
        cast(q30 as double) as q30,
        cast(q40 as double) as q40,
        cast(q50 as double) as q50,
        cast(q60 as double) as q60,
        cast(q70 as double) as q70,
        cast(q80 as double) as q80,
        cast(q90 as double) as q90,
    from source
)

select * from renamed
