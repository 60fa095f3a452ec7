with

source as (
    select * from {{ source('raw', 'run_skipped_systems') }}
),

renamed as (
    select
        cast(run_id as varchar) as run_id,
        cast(system_id as varchar) as system_id,
        cast(reason as varchar) as skip_reason,
        cast(recorded_at as timestamp) as recorded_at,
    from source
)

select * from renamed
