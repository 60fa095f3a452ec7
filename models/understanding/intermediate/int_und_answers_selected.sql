{#- Every (prompt, system) of the selected suite run with the system's stored reply, if any. -#}
with

selected as (
    select suite_run_id from {{ ref('int_und_suite_runs_selected') }}
),

run_prompts as (
    select * from {{ ref('stg_und_suite_run_prompts') }}
),

run_systems as (
    select * from {{ ref('stg_und_suite_run_systems') }}
),

prompts as (
    select * from {{ ref('stg_und_prompts') }}
),

responses as (
    select * from {{ ref('stg_und_responses') }}
),

final as (
    select
        selected.suite_run_id,
        prompts.prompt_key,
        prompts.prompting,
        run_systems.system_id,
        run_systems.backend,
        prompts.series_key,
        prompts.dataset,
        prompts.task,
        prompts.feature,
        prompts.format,
        prompts.decimals,
        prompts.expected,
        prompts.quadrant,
        prompts.series_length,
        responses.raw_text,
        -- a prompt without a stored reply (a suite run that ended early) is unusable and
        -- counted apart from an unparseable reply (n_unanswered, not n_unparsed)
        responses.prompt_key is not null as answered,
        coalesce(responses.parse_ok, false) as parse_ok,
        -- a stored reply that declined every option ("None of these"): the parser's reason
        -- ends so (the strict parser's, after a chain-of-thought prefix or the parser
        -- model's extraction); unusable like an unparseable reply but counted apart
        -- (n_abstained, not n_unparsed): the system answered, and chose no option
        coalesce(
            not responses.parse_ok
            and responses.parse_error like '%abstains: declines every option',
            false
        ) as abstained,
        case
            when responses.prompt_key is null then 'no reply stored for this prompt'
            else responses.parse_error
        end as parse_error,
        responses.answer,
        responses.answer_value,
        responses.answer_date,
        responses.parsed_by,
        responses.parser_text,
    from selected
    inner join run_prompts on run_prompts.suite_run_id = selected.suite_run_id
    inner join run_systems on run_systems.suite_run_id = selected.suite_run_id
    inner join prompts on prompts.prompt_key = run_prompts.prompt_key
    left join responses
        on responses.prompt_key = prompts.prompt_key
        and responses.system_id = run_systems.system_id
        and responses.fingerprint = run_systems.fingerprint
)

select * from final
