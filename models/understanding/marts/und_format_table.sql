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

-- two cells about the same series (a statistical_properties series' two detection
-- questions) are not independent: their covariance, correlation x se x se, the correlation
-- of the two scores over a cluster bootstrap of the series (a shared series drawn once),
-- floored at 0 (cells are never worth more than independent ones, as the design effect is
-- floored at 1); one that cannot be estimated counts as 1 (fully correlated: the wider
-- interval)
shared as (
    select * from {{ ref('int_und_shared_cells_correlated') }}
),

covariances as (
    select
        a.suite_run_id, a.prompting, a.system_id, a.format, a.task,
        sum(greatest(coalesce(s.correlation, 1.0), 0.0) * a.cell_se * b.cell_se) as cell_covariance,
    from shared as s
    inner join cells as a
        on a.suite_run_id = s.suite_run_id and a.prompting = s.prompting
        and a.system_id = s.system_id and a.format = s.format and a.task = s.task
        and a.feature = s.feature
    inner join cells as b
        on b.suite_run_id = s.suite_run_id and b.prompting = s.prompting
        and b.system_id = s.system_id and b.format = s.format and b.task = s.task
        and b.feature = s.other_feature
    group by a.suite_run_id, a.prompting, a.system_id, a.format, a.task
),

aggregated as (
    select
        c.suite_run_id,
        c.prompting,
        c.system_id,
        c.format,
        c.task,
        avg(cell_score) as score,
        -- the score is an unweighted mean of F cell estimates: its standard error is
        -- sqrt(sum of the cells' se^2 + 2 x the covariances of cells sharing series) / F
        -- (no pair shares a series: the cells are independent, the covariances absent)
        sqrt(case
            when sum(cell_se * cell_se) + 2 * coalesce(any_value(v.cell_covariance), 0.0) < 0 then 0.0
            else sum(cell_se * cell_se) + 2 * coalesce(any_value(v.cell_covariance), 0.0)
        end) / count(cell_score) as score_se,
        count(cell_score) = count(cell_se) as every_cell_has_interval,
        count(cell_score) as n_features,  -- the features averaged into score
        sum(n_prompts) as n_prompts,
        sum(n_unparsed) as n_unparsed,
        sum(n_unanswered) as n_unanswered,
        sum(n_abstained) as n_abstained,
    from cells as c
    left join covariances as v
        on v.suite_run_id = c.suite_run_id and v.prompting = c.prompting
        and v.system_id = c.system_id and v.format = c.format and v.task = c.task
    group by c.suite_run_id, c.prompting, c.system_id, c.format, c.task
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
