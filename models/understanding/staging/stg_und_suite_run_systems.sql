with

source as (
    select * from {{ source('und_raw', 'und_suite_run_systems') }}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(system_id as varchar) as system_id,
        cast(backend as varchar) as backend,
        cast(fingerprint as varchar) as fingerprint,
    from source
)

select * from renamed
