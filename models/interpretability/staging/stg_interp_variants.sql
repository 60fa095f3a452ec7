with

source as (
    select * from {{ source('interp_raw', 'interp_variants') }}
),

renamed as (
    select
        cast(variant_key as varchar) as variant_key,
        cast(variant_id as varchar) as variant_id,
        cast(dataset_id as integer) as dataset_id,
        cast(n_series as integer) as n_series,
        cast(length as integer) as series_length,
        cast(params as json) as params,
        cast(created_at as timestamp) as created_at,
    from source
)

select * from renamed
