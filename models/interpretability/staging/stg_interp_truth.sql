with

source as (
    select * from {{ source('interp_raw', 'interp_truth') }}
),

renamed as (
    select
        cast(variant_key as varchar) as variant_key,
        cast(target_index as integer) as target_index,
        cast(source_index as integer) as source_index,
        cast(lag as integer) as lag,
        cast(weight as double) as weight,
    from source
)

select * from renamed
