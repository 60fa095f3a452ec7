{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('rsn_raw', 'rsn_items') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='rsn_items') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('rsn_raw', 'rsn_items') }}
    {%- else %}
    select null as item_id, null as source, null as task, null as category, null as domain, null as question, null as options, null as answer_index, null as series, null as series_b, null as context, null as future, null as params, null as created_at limit 0
    {%- endif %}
),

renamed as (
    select
        cast(item_id as varchar) as item_id,
        cast(source as varchar) as item_source,
        cast(task as varchar) as task,
        cast(category as varchar) as category,
        cast(domain as varchar) as domain,
        cast(question as varchar) as question,
        cast(options as varchar[]) as options,
        cast(answer_index as integer) as answer_index,
        cast(series as double[]) as series,
        cast(series_b as double[]) as series_b,
        cast(context as varchar) as context,
        cast(future as double[]) as future,
        cast(params as varchar) as params,
        cast(created_at as timestamp) as created_at,
    from source
)

select * from renamed
