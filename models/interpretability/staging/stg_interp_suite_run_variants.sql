with

source as (
    select * from {{ source('interp_raw', 'interp_suite_run_variants') }}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(variant_key as varchar) as variant_key,
        cast(study as varchar) as study,
        cast(parameter as varchar) as parameter,
        cast(parameter_value as double) as parameter_value,
    from source
)

select * from renamed
