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
        -- a reply declining every option is a refusal, not garbage: its own column
        cast(
            case
                when abstained then '(abstained)'
                else coalesce(predicted, '(unusable)')
            end as varchar
        ) as predicted,
        cast(count(*) as integer) as n_prompts,
    from scored
    group by all
)

select * from final
