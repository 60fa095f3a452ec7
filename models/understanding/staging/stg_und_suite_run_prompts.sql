with

source as (
    select * from {{ source('und_raw', 'und_suite_run_prompts') }}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompt_key as varchar) as prompt_key,
    from source
)

select * from renamed
