with

tested as (
    select * from {{ ref('int_und_position_bias_tested') }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(dataset as varchar) as dataset,
        cast(task as varchar) as task,
        cast(quadrant as integer) as quadrant,
        cast(n_prompts as integer) as n_prompts,
        cast(n_correct as integer) as n_correct,
        cast(100.0 * accuracy as double) as accuracy_pct,
        cast(100.0 * accuracy_ci_low as double) as accuracy_ci_low_pct,
        cast(100.0 * accuracy_ci_high as double) as accuracy_ci_high_pct,
        cast(100.0 * accuracy_elsewhere as double) as accuracy_elsewhere_pct,
        cast(p_value as double) as p_value,
        cast(p_holm as double) as p_holm,
        cast(min_prompts_to_judge as integer) as min_prompts_to_judge,
        cast(judgeable as boolean) as judgeable,
        cast(position_bias as boolean) as position_bias,
    from tested
)

select * from final
