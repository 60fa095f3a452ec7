{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_predictions') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_predictions') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_predictions') }}
    {%- else %}
    select null as run_key, null as series_index, null as time_index, null as actual, null as prediction limit 0
    {%- endif %}
),

renamed as (
    select
        cast(run_key as varchar) as run_key,
        cast(series_index as integer) as series_index,
        cast(time_index as integer) as time_index,
        cast(actual as double) as actual,
        cast(prediction as double) as prediction,
    from source
)

select * from renamed
