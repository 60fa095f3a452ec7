with

source as (
    select * from {{ source('rsn_raw', 'rsn_suite_run_prompts') }}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompt_hash as varchar) as prompt_hash,
    from source
)

select * from renamed
