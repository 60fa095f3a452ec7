with

source as (
    select * from {{ source('und_raw', 'und_responses') }}
),

renamed as (
    select
        cast(response_key as varchar) as response_key,
        cast(prompt_key as varchar) as prompt_key,
        cast(system_id as varchar) as system_id,
        cast(fingerprint as varchar) as fingerprint,
        cast(raw_text as varchar) as raw_text,
        cast(parse_ok as boolean) as parse_ok,
        cast(parse_error as varchar) as parse_error,
        cast(answer as varchar) as answer,
        cast(answer_value as double) as answer_value,
        cast(answer_date as date) as answer_date,
        cast(answered_at as timestamp) as answered_at,
        cast(parsed_by as varchar) as parsed_by,
        cast(parser as varchar) as parser,
        cast(parser_text as varchar) as parser_text,
    from source
)

select * from renamed
