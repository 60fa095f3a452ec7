with

source as (
    select * from {{ source('rsn_raw', 'rsn_items') }}
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
