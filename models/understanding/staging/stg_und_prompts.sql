with

source as (
    select * from {{ source('und_raw', 'und_prompts') }}
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
        cast(coalesce(prompting, 'zero_shot') as varchar) as prompting,
    from source
)

select * from renamed
