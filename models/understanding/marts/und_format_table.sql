with

scores as (
    select * from {{ ref('und_scores') }}
    where feature not in ('brownian', 'outlier', 'monotone', 'monotone_noise', 'sinusoidal')
),

cells as (
    select
        *,
        case when task in ('detection', 'classification') then f1 else accuracy end as cell_score,
        -- the cell's own 95 % interval (und_scores: Wilson for accuracy, percentile
        -- bootstrap over series for F1) read as a standard error: width / (2 z)
        (case when task in ('detection', 'classification') then f1_ci_high - f1_ci_low
            else accuracy_ci_high - accuracy_ci_low end) / (2 * 1.959963984540054) as cell_se,
    from scores
),

aggregated as (
    select
        suite_run_id,
        prompting,
        system_id,
        format,
        task,
        avg(cell_score) as score,
        -- the score is an unweighted mean of F independent cell estimates (each feature's
        -- prompts are its own): its standard error is sqrt(sum of the cells' se^2) / F
        sqrt(sum(cell_se * cell_se)) / count(cell_score) as score_se,
        count(cell_score) = count(cell_se) as every_cell_has_interval,
        count(*) as n_features,
        sum(n_prompts) as n_prompts,
        sum(n_unparsed) as n_unparsed,
        sum(n_unanswered) as n_unanswered,
        sum(n_abstained) as n_abstained,
    from cells
    group by suite_run_id, prompting, system_id, format, task
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(prompting as varchar) as prompting,
        cast(system_id as varchar) as system_id,
        cast(format as varchar) as format,
        cast(task as varchar) as task,
        cast(case when task in ('detection', 'classification') then 'f1' else 'accuracy' end as varchar) as metric,
        cast(score as double) as score,
        -- normal 95 % interval of the mean, clipped to [0, 1]; null when a cell has none
        cast(case when every_cell_has_interval and score_se is not null
            then greatest(0.0, score - 1.959963984540054 * score_se) end as double) as score_ci_low,
        cast(case when every_cell_has_interval and score_se is not null
            then least(1.0, score + 1.959963984540054 * score_se) end as double) as score_ci_high,
        cast(n_features as integer) as n_features,
        cast(n_prompts as integer) as n_prompts,
        cast(n_unparsed as integer) as n_unparsed,
        cast(n_unanswered as integer) as n_unanswered,
        cast(n_abstained as integer) as n_abstained,
    from aggregated
)

select * from final
