{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('und_raw', 'und_suite_run_prompts') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='und_suite_run_prompts') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('und_raw', 'und_suite_run_prompts') }}
    {%- else %}
    select null as suite_run_id, null as prompt_key limit 0
    {%- endif %}
),

renamed as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompt_key as varchar) as prompt_key,
    from source
)

select * from renamed
