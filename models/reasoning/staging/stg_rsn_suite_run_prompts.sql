{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('rsn_raw', 'rsn_suite_run_prompts') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='rsn_suite_run_prompts') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('rsn_raw', 'rsn_suite_run_prompts') }}
    {%- else %}
    select null as suite_run_id, null as prompt_hash limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompt_hash as varchar) as prompt_hash,
    from source
)

select * from renamed
