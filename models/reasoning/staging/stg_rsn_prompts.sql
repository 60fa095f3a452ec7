with

source as (
    select * from {{ source('rsn_raw', 'rsn_prompts') }}
),

renamed as (
    select
        cast(prompt_hash as varchar) as prompt_hash,
        cast(system_id as varchar) as system_id,
        cast(system_kind as varchar) as system_kind,
        cast(fingerprint as varchar) as fingerprint,
        cast(item_id as varchar) as item_id,
        cast(condition as varchar) as condition,
        cast(encoding as varchar) as encoding,
        cast(messages as varchar) as messages,
        cast(created_at as timestamp) as created_at,
        cast(sample_index as integer) as sample_index,
        cast(temperature as double) as temperature,
    from source
)

select * from renamed
