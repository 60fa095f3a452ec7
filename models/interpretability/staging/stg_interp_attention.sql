{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_attention') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_attention') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_attention') }}
    {%- else %}
    select null as run_key, null as attention, null as target_index, null as source_index, null as lag, null as value limit 0
    {%- endif %}
),

renamed as (
    select
        cast(run_key as varchar) as run_key,
        cast(attention as varchar) as attention,
        cast(target_index as integer) as target_index,
        cast(source_index as integer) as source_index,
        cast(lag as integer) as lag,
        cast(value as double) as value,
    from source
)

select * from renamed
