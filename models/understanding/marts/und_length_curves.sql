with

scored as (
    select * from {{ ref('int_und_answers_scored') }}
    where task in ('retrieval', 'arithmetic_min', 'arithmetic_max')
        and dataset not in ('brownian', 'outlier', 'monotone', 'monotone_noise', 'sinusoidal')
),

binned as (
    select *, cast(floor(series_length / 30) * 30 as integer) as length_bin_start
    from scored
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(task as varchar) as task,
        cast(dataset as varchar) as dataset,
        cast(format as varchar) as format,
        cast(length_bin_start as integer) as length_bin_start,
        cast(length_bin_start + 29 as integer) as length_bin_end,
        cast(count(*) as integer) as n_prompts,
        cast(count(*) filter (where answered and not parse_ok) as integer) as n_unparsed,
        cast(count(*) filter (where not answered) as integer) as n_unanswered,
        cast(avg(case when correct then 1.0 else 0.0 end) as double) as accuracy,
        cast({{ wilson_interval('count(*) filter (where correct)', 'count(*)', 'low') }} as double) as accuracy_ci_low,
        cast({{ wilson_interval('count(*) filter (where correct)', 'count(*)', 'high') }} as double) as accuracy_ci_high,
        cast(avg(abs_pct_error) as double) as mape,
    from binned
    group by all
)

select * from final
