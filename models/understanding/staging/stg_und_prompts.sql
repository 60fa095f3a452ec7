{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('und_raw', 'und_prompts') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='und_prompts') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('und_raw', 'und_prompts') }}
    {%- else %}
    select null as prompt_key, null as series_key, null as dataset, null as task, null as feature, null as format, null as decimals, null as template_id, null as template_version, null as prompt_text, null as expected, null as options, null as quadrant, null as series_length limit 0
    {%- endif %}
),

renamed as (
    select
        cast(prompt_key as varchar) as prompt_key,
        cast(series_key as varchar) as series_key,
        cast(dataset as varchar) as dataset,
        cast(task as varchar) as task,
        cast(feature as varchar) as feature,
        cast(format as varchar) as format,
        cast(decimals as integer) as decimals,
        cast(template_id as varchar) as template_id,
        cast(template_version as integer) as template_version,
        cast(prompt_text as varchar) as prompt_text,
        cast(expected as json) as expected,
        cast(options as varchar[]) as options,
        cast(quadrant as integer) as quadrant,
        cast(series_length as integer) as series_length,
    from source
)

select * from renamed
