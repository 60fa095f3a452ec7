with

responses as (
    select * from {{ ref('int_rsn_responses_scored') }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompt_hash as varchar) as prompt_hash,
        cast(system_id as varchar) as system_id,
        cast(task as varchar) as task,
        cast(condition as varchar) as condition,
        cast(item_id as varchar) as item_id,
        cast(sample_index as integer) as sample_index,
        cast(raw_text as varchar) as raw_text,
        cast(parse_error as varchar) as parse_error,
    from responses
    where is_answered and not parse_ok
)

select * from final
