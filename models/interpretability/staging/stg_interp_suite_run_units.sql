{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_suite_run_units') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_suite_run_units') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_suite_run_units') }}
    {%- else %}
    select null as suite_run_id, null as run_key, null as reused limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(run_key as varchar) as run_key,
        cast(reused as boolean) as reused,
    from source
)

select * from renamed
