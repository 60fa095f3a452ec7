with

source as (
    select * from {{ source('raw', 'forecast_fallbacks') }}
),

renamed as (
    select
        cast(run_id as varchar) as computed_by_run_id,
        cast(partition_key as varchar) as partition_key,
        cast(system_id as varchar) as system_id,
        cast(ticker as varchar) as ticker,
        cast(window_end_date as date) as window_end_date,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(reason as varchar) as fallback_reason,
        cast(recorded_at as timestamp) as recorded_at,
    from source
)

select * from renamed
