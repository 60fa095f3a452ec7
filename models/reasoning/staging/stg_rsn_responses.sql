{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('rsn_raw', 'rsn_responses') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='rsn_responses') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('rsn_raw', 'rsn_responses') }}
    {%- else %}
    select null as prompt_hash, null as system_id, null as raw_text, null as parsed_choice, null as forecast, null as parse_ok, null as parse_error, null as seconds, null as answered_at limit 0
    {%- endif %}
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
