with

source as (
    select * from {{ source('rsn_raw', 'rsn_suite_run_items') }}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(item_id as varchar) as item_id,
    from source
)

select * from renamed
