with

computed as (
    select * from {{ ref('int_und_scores_computed') }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(task as varchar) as task,
        cast(feature as varchar) as feature,
        cast(format as varchar) as format,
        cast(n_prompts as integer) as n_prompts,
        cast(n_unparsed as integer) as n_unparsed,
        cast(n_unanswered as integer) as n_unanswered,
        cast(n_abstained as integer) as n_abstained,
        cast(n_parsed_by_llm as integer) as n_parsed_by_llm,
        cast(coverage as double) as coverage,
        cast(accuracy as double) as accuracy,
        cast(accuracy_ci_low as double) as accuracy_ci_low,
        cast(accuracy_ci_high as double) as accuracy_ci_high,
        cast(f1 as double) as f1,
        cast(f1_ci_low as double) as f1_ci_low,
        cast(f1_ci_high as double) as f1_ci_high,
        cast(mape as double) as mape,
        cast(mape_ci_low as double) as mape_ci_low,
        cast(mape_ci_high as double) as mape_ci_high,
        cast(mape_parsed as double) as mape_parsed,
        cast(date_accuracy as double) as date_accuracy,
        cast(accuracy_two_step as double) as accuracy_two_step,
    from computed
)

select * from final
