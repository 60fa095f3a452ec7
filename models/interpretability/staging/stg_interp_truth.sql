{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_truth') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_truth') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_truth') }}
    {%- else %}
    select null as variant_key, null as target_index, null as source_index, null as lag, null as weight limit 0
    {%- endif %}
),

renamed as (
    select
        cast(variant_key as varchar) as variant_key,
        cast(target_index as integer) as target_index,
        cast(source_index as integer) as source_index,
        cast(lag as integer) as lag,
        cast(weight as double) as weight,
    from source
)

select * from renamed
