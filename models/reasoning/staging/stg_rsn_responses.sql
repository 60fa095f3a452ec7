with

source as (
    select * from {{ source('rsn_raw', 'rsn_responses') }}
),

renamed as (
    select
        cast(prompt_hash as varchar) as prompt_hash,
        cast(system_id as varchar) as system_id,
        cast(raw_text as varchar) as raw_text,
        cast(parsed_choice as integer) as parsed_choice,
        cast(forecast as double[]) as forecast,
        cast(parse_ok as boolean) as parse_ok,
        cast(parse_error as varchar) as parse_error,
        cast(seconds as double) as seconds,
        cast(answered_at as timestamp) as answered_at,
    from source
)

select * from renamed
