with

source as (
    select * from {{ source('interp_raw', 'interp_attention') }}
),

renamed as (
    select
        cast(run_key as varchar) as run_key,
        cast(attention as varchar) as attention,
        cast(target_index as integer) as target_index,
        cast(source_index as integer) as source_index,
        cast(lag as integer) as lag,
        cast(value as double) as value,
    from source
)

select * from renamed
