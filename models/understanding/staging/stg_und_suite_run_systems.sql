{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('und_raw', 'und_suite_run_systems') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='und_suite_run_systems') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('und_raw', 'und_suite_run_systems') }}
    {%- else %}
    select null as suite_run_id, null as system_id, null as backend, null as fingerprint limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(system_id as varchar) as system_id,
        cast(backend as varchar) as backend,
        cast(fingerprint as varchar) as fingerprint,
    from source
)

select * from renamed
