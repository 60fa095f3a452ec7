{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('rsn_raw', 'rsn_prompts') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='rsn_prompts') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('rsn_raw', 'rsn_prompts') }}
    {%- else %}
    select null as prompt_hash, null as system_id, null as system_kind, null as fingerprint, null as item_id, null as condition, null as encoding, null as messages, null as created_at limit 0
    {%- endif %}
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
    from source
)

select * from renamed
