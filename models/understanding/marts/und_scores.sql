with

computed as (
    select * from {{ ref('int_und_scores_computed') }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(system_id as varchar) as system_id,
        cast(task as varchar) as task,
        cast(feature as varchar) as feature,
        cast(format as varchar) as format,
        cast(n_prompts as integer) as n_prompts,
        cast(n_unparsed as integer) as n_unparsed,
        cast(accuracy as double) as accuracy,
        cast(f1 as double) as f1,
        cast(mape as double) as mape,
        cast(date_accuracy as double) as date_accuracy,
    from computed
)

select * from final
