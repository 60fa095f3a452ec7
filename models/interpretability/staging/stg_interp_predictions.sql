with

source as (
    select * from {{ source('interp_raw', 'interp_predictions') }}
),

renamed as (
    select
        cast(run_key as varchar) as run_key,
        cast(series_index as integer) as series_index,
        cast(time_index as integer) as time_index,
        cast(actual as double) as actual,
        cast(prediction as double) as prediction,
    from source
)

select * from renamed
