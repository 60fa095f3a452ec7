{#- The copied-window count of each stored partition, from raw.forecast_partitions (a
    column of its own model so the partitions' staging stays as it is). -#}
with

source as (
    select * from {{ source('raw', 'forecast_partitions') }}
),

renamed as (
    select
        cast(partition_key as varchar) as partition_key,
        cast(n_copied_windows as integer) as n_copied_windows,
    from source
)

select * from renamed
