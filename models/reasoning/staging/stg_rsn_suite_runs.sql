{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('rsn_raw', 'rsn_suite_runs') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='rsn_suite_runs') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('rsn_raw', 'rsn_suite_runs') }}
    {%- else %}
    select null as suite_run_id, null as started_at, null as finished_at, null as status, null as source, null as config, null as n_items, null as n_prompts, null as message limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(started_at as timestamp) as started_at,
        cast(finished_at as timestamp) as finished_at,
        cast(status as varchar) as suite_run_status,
        cast(source as varchar) as source,
        cast(config as varchar) as config,
        cast(n_items as integer) as n_items,
        cast(n_prompts as integer) as n_prompts,
        cast(message as varchar) as suite_run_message,
    from source
)

select * from renamed
