with

source as (
    select * from {{ source('raw', 'run_partitions') }}
),

renamed as (
    select
        cast(run_id as varchar) as run_id,
        cast(partition_key as varchar) as partition_key,
        cast(reused as boolean) as is_reused,
    from source
)

select * from renamed
