{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('rsn_raw', 'rsn_suite_run_items') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='rsn_suite_run_items') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('rsn_raw', 'rsn_suite_run_items') }}
    {%- else %}
    select null as suite_run_id, null as item_id limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(item_id as varchar) as item_id,
    from source
)

select * from renamed
