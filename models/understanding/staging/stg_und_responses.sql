{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('und_raw', 'und_responses') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='und_responses') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('und_raw', 'und_responses') }}
    {%- else %}
    select null as response_key, null as prompt_key, null as system_id, null as fingerprint, null as raw_text, null as parse_ok, null as parse_error, null as answer, null as answer_value, null as answer_date, null as answered_at limit 0
    {%- endif %}
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
    from source
)

select * from renamed
