with

scored as (
    select * from {{ ref('int_leaderboard_scored') }}
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(scope as varchar) as scope,
        cast(metric as varchar) as metric,
        cast(system_id as varchar) as system_id,
        cast(skill_score as double) as skill_score,
        cast(skill_score_lower as double) as skill_score_lower,
        cast(skill_score_upper as double) as skill_score_upper,
        cast(win_rate as double) as win_rate,
        cast(win_rate_lower as double) as win_rate_lower,
        cast(win_rate_upper as double) as win_rate_upper,
        cast(average_rank as double) as average_rank,
        cast(n_tasks as integer) as n_tasks,
        cast(num_failures as integer) as num_failures,
        cast(n_tasks_zero_baseline as integer) as n_tasks_zero_baseline,
        cast(baseline_system_id as varchar) as baseline_system_id,
        cast(reason as varchar) as reason,
    from scored
)

select * from final
