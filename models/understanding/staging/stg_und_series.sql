{#- Guarded source: when the suite never ran, the raw table is absent and this view is empty. -#}
-- depends_on: {{ source('und_raw', 'und_series') }}
{%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier='und_series') if execute else none %}

with

source as (
    {%- if relation is not none %}
    select * from {{ source('und_raw', 'und_series') }}
    {%- else %}
    select null as series_key, null as dataset, null as series_group, null as split, null as series_index, null as seed, null as generator_version, null as start_date, null as length, null as sub_feature, null as labels, null as column_names, null as values_1, null as values_2, null as qualitative, null as quantitative limit 0
    {%- endif %}
),

renamed as (
    select
        cast(series_key as varchar) as series_key,
        cast(dataset as varchar) as dataset,
        cast(series_group as varchar) as series_group,
        cast(split as varchar) as split,
        cast(series_index as integer) as series_index,
        cast(seed as ubigint) as seed,
        cast(generator_version as integer) as generator_version,
        cast(start_date as date) as start_date,
        cast(length as integer) as length,
        cast(sub_feature as varchar) as sub_feature,
        cast(labels as json) as labels,
        cast(column_names as varchar[]) as column_names,
        cast(values_1 as double[]) as values_1,
        cast(values_2 as double[]) as values_2,
        cast(qualitative as varchar) as qualitative,
        cast(quantitative as varchar) as quantitative,
    from source
)

select * from renamed
