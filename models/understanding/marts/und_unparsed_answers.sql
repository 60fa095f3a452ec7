with

answers as (
    select * from {{ ref('int_und_answers_selected') }}
    where not parse_ok
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(prompt_key as varchar) as prompt_key,
        cast(task as varchar) as task,
        cast(feature as varchar) as feature,
        cast(format as varchar) as format,
        cast(raw_text as varchar) as raw_text,
        cast(parse_error as varchar) as parse_error,
        cast(abstained as boolean) as abstained,
        cast(parser_text as varchar) as parser_text,
    from answers
)

select * from final
