{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_scores') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_scores') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_scores') }}
    {%- else %}
    select null as run_key, null as series_index, null as split, null as mse limit 0
    {%- endif %}
),

renamed as (
    select
        cast(run_key as varchar) as run_key,
        cast(series_index as integer) as series_index,
        cast(split as varchar) as split,
        cast(mse as double) as mse,
    from source
)

select * from renamed
