with

scored as (
    select * from {{ ref('int_und_answers_scored') }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(task as varchar) as task,
        cast(series_key as varchar) as series_key,
        cast(any_value(dataset) as varchar) as dataset,
        cast(any_value(series_length) as integer) as series_length,
        cast(count(*) as integer) as n_prompts,
        cast(count(*) filter (where correct) as integer) as n_correct,
    from scored
    group by suite_run_id, prompting, system_id, task, series_key
)

select * from final
