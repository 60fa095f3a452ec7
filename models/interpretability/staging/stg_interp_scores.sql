with

source as (
    select * from {{ source('interp_raw', 'interp_scores') }}
),

renamed as (
    select
        cast(run_key as varchar) as run_key,
        cast(series_index as integer) as series_index,
        cast(split as varchar) as split,
        cast(mse as double) as mse,
    from source
)

select * from renamed
