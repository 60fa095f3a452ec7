{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('und_raw', 'und_suite_runs') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='und_suite_runs') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('und_raw', 'und_suite_runs') }}
    {%- else %}
    select null as suite_run_id, null as started_at, null as finished_at, null as status, null as config_name, null as config, null as n_prompts, null as message limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(started_at as timestamp) as started_at,
        cast(finished_at as timestamp) as finished_at,
        cast(status as varchar) as status,
        cast(config_name as varchar) as config_name,
        cast(config as json) as config,
        cast(n_prompts as integer) as n_prompts,
        cast(message as varchar) as message,
    from source
)

select * from renamed
