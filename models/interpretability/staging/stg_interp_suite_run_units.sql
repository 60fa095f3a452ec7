with

source as (
    select * from {{ source('interp_raw', 'interp_suite_run_units') }}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(run_key as varchar) as run_key,
        cast(reused as boolean) as reused,
    from source
)

select * from renamed
