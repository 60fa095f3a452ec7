with

source as (
    select * from {{ source('raw', 'forecast_partitions') }}
),

renamed as (
    select
        cast(partition_key as varchar) as partition_key,
        cast(input_key as varchar) as input_key,
        cast(run_id as varchar) as computed_by_run_id,
        cast(system_id as varchar) as system_id,
        cast(ticker as varchar) as ticker,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(n_windows as integer) as n_windows,
        cast(n_rows as bigint) as n_rows,
        cast(seconds as double) as compute_seconds,
        cast(finished_at as timestamp) as finished_at,
        cast(n_fallback_windows as integer) as n_fallback_windows,
    from source
)

select * from renamed
