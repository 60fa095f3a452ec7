with

assigned as (
    select * from {{ ref('rsn_ratings_assigned') }}
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(metric as varchar) as metric,
        cast(task as varchar) as task,
        cast(system_id as varchar) as system_id,
        cast(raw_score as double) as raw_score,
        cast(rating as integer) as rating,
        cast(rating_levels as integer) as rating_levels,
        cast(higher_is_better as boolean) as higher_is_better,
        cast(rank as integer) as rank,
        cast(count(*) over (partition by suite_run_id, metric, task) as integer) as n_systems,
    from assigned
)

select * from final
