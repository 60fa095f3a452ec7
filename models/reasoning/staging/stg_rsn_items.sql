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
        -- the sampled series the item asks about (the unit its intervals count): an imported
        -- row's uuid (question rows name their series' uuid), else the generator's scenario,
        -- else the series' own values (an imported question row carrying its series)
        cast(coalesce(
            'uuid:' || json_extract_string(params, '$.uuid'),
            'scenario:' || md5(cast(json_extract(params, '$.scenario') as varchar)),
            'values:' || md5(cast(series as varchar))
        ) as varchar) as series_id,
        cast(created_at as timestamp) as created_at,
    from source
)

select * from renamed
