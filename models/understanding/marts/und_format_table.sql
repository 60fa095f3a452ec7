with

scores as (
    select * from {{ ref('und_scores') }}
    where feature not in ('brownian', 'outlier', 'monotone', 'monotone_noise', 'sinusoidal')
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(format as varchar) as format,
        cast(task as varchar) as task,
        cast(case when task in ('detection', 'classification') then 'f1' else 'accuracy' end as varchar) as metric,
        cast(avg(case when task in ('detection', 'classification') then f1 else accuracy end) as double) as score,
        cast(count(*) as integer) as n_features,
        cast(sum(n_prompts) as integer) as n_prompts,
        cast(sum(n_unparsed) as integer) as n_unparsed,
    from scores
    group by suite_run_id, prompting, system_id, format, task
)

select * from final
