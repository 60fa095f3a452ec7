{#- The paper's printed numbers (seed paper_values: Tables 2, 5, 6) beside the selected run's,
    for the systems both have: a seed system with the paper's id (arima, random, biased,
    chronos, ...) or a system registered by `tsrate import-predictions --metadata` with the
    paper's symbol. Table 5 rows meet robustness_scores (the paper's outcome R^max), Table 6
    rows accuracy_scores (the mean over windows), Table 2's per-system averages the same
    scores averaged over the run's perturbations (WRS/APE/PIE over both confounders too, as
    the paper's Table 2 does). -#}
with

paper as (
    select * from {{ ref('paper_values') }}
    where system_id is not null
),

catalog as (
    select system_id, display_name, paper_symbol, origin from {{ ref('system_catalog') }}
),

runs as (
    select * from {{ ref('stg_runs') }}
),

robustness as (
    select run_id, system_id, perturbation_id, metric, raw_score as tsrate_value
    from {{ ref('robustness_scores') }}
    where is_default_outcome
),

accuracy as (
    select run_id, system_id, perturbation_id, metric, mean as tsrate_value
    from {{ ref('accuracy_scores') }}
),

per_perturbation as (
    {#- a null score (a metric the study cannot produce) is no score: 0, as Table 2 counts -#}
    select *, (tsrate_value is not null)::integer as n_averaged from robustness
    union all by name
    select *, (tsrate_value is not null)::integer as n_averaged from accuracy
),

averaged as (
    select
        run_id,
        system_id,
        'mean' as perturbation_id,
        regexp_replace(metric, '_(industry|company)$', '') as metric,
        avg(tsrate_value) as tsrate_value,
        {#- the scores averaged: a metric the study cannot produce leaves null scores -#}
        count(tsrate_value) as n_averaged,
    from per_perturbation
    group by all
),

ours as (
    select * from per_perturbation
    union all by name
    select * from averaged
),

ratings as (
    select run_id, system_id, perturbation_id, metric, rating
    from {{ ref('ratings') }}
    where is_default_outcome
),

matched as (
    select
        paper.*,
        catalog.system_id as tsrate_system_id,
        catalog.display_name,
    from paper
    inner join catalog
        on catalog.system_id = paper.system_id
        or (catalog.origin = 'imported' and catalog.paper_symbol = paper.paper_symbol)
),

final as (
    select
        cast(ours.run_id as varchar) as run_id,
        cast(matched.paper_table as varchar) as paper_table,
        cast(matched.paper_label as varchar) as paper_label,
        cast(matched.metric as varchar) as metric,
        cast(matched.perturbation_id as varchar) as perturbation_id,
        cast(matched.paper_symbol as varchar) as paper_symbol,
        cast(matched.tsrate_system_id as varchar) as system_id,
        cast(matched.display_name as varchar) as display_name,
        cast(matched.value as double) as paper_value,
        cast(matched.printed as varchar) as paper_printed,
        cast(matched.paper_rating as integer) as paper_rating,
        cast(ours.tsrate_value as double) as tsrate_value,
        cast(ours.tsrate_value - matched.value as double) as difference,
        -- relative to the paper's value, the reference a reproduction is measured against
        -- (not to ours); null where the paper prints 0
        cast(
            case when matched.value <> 0 then (ours.tsrate_value - matched.value) / abs(matched.value) end
            as double
        ) as relative_difference,
        cast(ratings.rating as integer) as tsrate_rating,
        cast(ours.n_averaged as integer) as tsrate_n_averaged,
        -- the paper's study (tsrate.robustness.presets PRESETS['paper']): same tickers and period
        cast(
            coalesce(
                list_sort(runs.tickers) = ['C', 'GOOG', 'META', 'MRK', 'PFE', 'WFC']
                and runs.study_start = date '2023-03-28'
                and runs.study_end = date '2024-04-22',
                false
            ) as boolean
        ) as same_study,
        cast(matched.note as varchar) as paper_note,
    from matched
    inner join ours
        on ours.system_id = matched.tsrate_system_id
        and ours.perturbation_id = matched.perturbation_id
        and ours.metric = matched.metric
    left join ratings
        on ratings.run_id = ours.run_id
        and ratings.system_id = ours.system_id
        and ratings.perturbation_id = ours.perturbation_id
        and ratings.metric = ours.metric
    left join runs on runs.run_id = ours.run_id
)

select * from final
