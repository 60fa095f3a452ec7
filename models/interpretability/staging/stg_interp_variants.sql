{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_variants') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_variants') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_variants') }}
    {%- else %}
    select null as variant_key, null as variant_id, null as dataset_id, null as n_series, null as length, null as params, null as created_at limit 0
    {%- endif %}
),

renamed as (
    select
        cast(variant_key as varchar) as variant_key,
        cast(variant_id as varchar) as variant_id,
        cast(dataset_id as integer) as dataset_id,
        cast(n_series as integer) as n_series,
        cast(length as integer) as series_length,
        cast(params as json) as params,
        cast(created_at as timestamp) as created_at,
    from source
)

select * from renamed
