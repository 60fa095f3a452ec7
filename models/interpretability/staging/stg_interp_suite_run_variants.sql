{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('interp_raw', 'interp_suite_run_variants') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='interp_suite_run_variants') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('interp_raw', 'interp_suite_run_variants') }}
    {%- else %}
    select null as suite_run_id, null as variant_key, null as study, null as parameter, null as parameter_value limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(variant_key as varchar) as variant_key,
        cast(study as varchar) as study,
        cast(parameter as varchar) as parameter,
        cast(parameter_value as double) as parameter_value,
    from source
)

select * from renamed
