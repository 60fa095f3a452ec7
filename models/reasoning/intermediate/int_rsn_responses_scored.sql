{#- Every prompt of the selected suite run with its item and response; choices scored. -#}
with

selected as (
    select suite_run_id from {{ ref('int_rsn_suite_runs_selected') }}
),

run_prompts as (
    select * from {{ ref('stg_rsn_suite_run_prompts') }}
),

prompts as (
    select * from {{ ref('stg_rsn_prompts') }}
),

items as (
    select * from {{ ref('stg_rsn_items') }}
),

responses as (
    select * from {{ ref('stg_rsn_responses') }}
),

final as (
    select
        selected.suite_run_id,
        prompts.prompt_hash,
        prompts.system_id,
        prompts.system_kind,
        prompts.condition,
        prompts.encoding,
        prompts.sample_index,
        items.item_id,
        items.series_id,
        items.item_source,
        items.task,
        items.category,
        items.domain,
        len(items.options) as n_options,
        items.answer_index,
        responses.prompt_hash is not null as is_answered,
        coalesce(responses.parse_ok, false) as parse_ok,
        responses.parse_error,
        responses.raw_text,
        responses.parsed_choice,
        case
            when items.task <> 'forecast'
                then coalesce(responses.parsed_choice = items.answer_index, false)
        end as is_correct,
        responses.forecast,
        items.series,
        items.future,
    from selected
    inner join run_prompts on run_prompts.suite_run_id = selected.suite_run_id
    inner join prompts on prompts.prompt_hash = run_prompts.prompt_hash
    inner join items on items.item_id = prompts.item_id
    left join responses on responses.prompt_hash = prompts.prompt_hash
)

select * from final
