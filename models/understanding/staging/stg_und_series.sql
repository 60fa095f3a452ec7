with

source as (
    select * from {{ source('und_raw', 'und_series') }}
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
