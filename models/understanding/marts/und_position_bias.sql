with

scored as (
    select * from {{ ref('int_und_answers_scored') }}
    where quadrant is not null
),

by_quadrant as (
    select
        suite_run_id,
        system_id,
        dataset,
        task,
        format,
        quadrant,
        count(*) as n_prompts,
        100.0 * avg(case when correct then 1.0 else 0.0 end) as accuracy_pct,
    from scored
    group by all
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(system_id as varchar) as system_id,
        cast(dataset as varchar) as dataset,
        cast(task as varchar) as task,
        cast(format as varchar) as format,
        cast(quadrant as integer) as quadrant,
        cast(n_prompts as integer) as n_prompts,
        cast(accuracy_pct as double) as accuracy_pct,
        cast(
            max(accuracy_pct) over w - min(accuracy_pct) over w as double
        ) as quadrant_gap_pct,
        cast(count(*) over w as integer) as n_quadrants,
        cast(max(accuracy_pct) over w - min(accuracy_pct) over w > 10 as boolean) as position_bias,
    from by_quadrant
    window w as (partition by suite_run_id, system_id, dataset, task, format)
)

select * from final
