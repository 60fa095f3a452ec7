with

scored as (
    select * from {{ ref('int_und_answers_scored') }}
    where task in ('detection', 'classification', 'search')
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(task as varchar) as task,
        cast(feature as varchar) as feature,
        cast(truth as varchar) as truth,
        cast(coalesce(predicted, '(unusable)') as varchar) as predicted,
        cast(count(*) as integer) as n_prompts,
    from scored
    group by all
)

select * from final
