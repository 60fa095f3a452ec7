with

assigned as (
    select * from {{ ref('int_ratings_assigned') }}
),

systems as (
    select * from {{ ref('stg_systems') }}
),

selected_run as (
    select run_id, study_id from {{ ref('int_runs_selected') }}
),

{#- Separability by the paired block bootstrap over window dates (rating_stability's
    resamples, the same dates for every system): one row per system and outcome (the
    level-1 row; the value repeats on every level). It covers every outcome (accuracy:
    null), and is used where int_ratings_assigned knows no spread over treatment draws
    (WRS, accuracy, one-draw APE/PIE: separable null there). -#}
bootstrapped as (
    select run_id, metric, outcome, perturbation_id, system_id, separable, separation_reason,
    from {{ ref('int_ratings_bootstrapped') }}
    where rating_level = 1
),

{#- Robustness scores that could not be computed (a metric the study's shape cannot
    produce, or a system not analysed on an outcome, e.g. wql without quantile forecasts)
    or that are not a finite number (NaN: int_ratings_assigned rates finite scores only)
    are not rated, but appear with a null rating and the score's reason, never silently
    missing. They do not count among the systems rated together. -#}
unscored as (
    select
        * exclude (score_reason),
        coalesce(
            score_reason,
            {{ unrated_reason('raw_score', 'score', 'the score could not be computed') }}
        ) as score_reason,
    from {{ ref('robustness_scores') }}
    where raw_score is null or not isfinite(raw_score)
),

{#- Likewise an accuracy mean that is null or not a finite number (no window with a value,
    or a NaN among them): not rated, but listed with the reason. -#}
unscored_accuracy as (
    select * from {{ ref('accuracy_scores') }}
    where mean is null or not isfinite(mean)
),

rated_and_unrated as (
    select
        run_id, metric, metric_family, outcome, is_default_outcome, perturbation_id,
        system_id, raw_score, rating, rating_levels, higher_is_better, rank, rating_reason,
        score_spread, separable, separation_reason,
    from assigned
    union all
    select
        unscored.run_id,
        unscored.metric,
        'robustness' as metric_family,
        unscored.outcome,
        unscored.is_default_outcome,
        unscored.perturbation_id,
        unscored.system_id,
        cast(null as double) as raw_score,
        cast(null as integer) as rating,
        {{ var('rating_levels') }} as rating_levels,
        unscored.higher_is_better,
        cast(null as integer) as rank,
        'not rated: ' || unscored.score_reason as rating_reason,
        cast(null as double) as score_spread,
        cast(null as boolean) as separable,
        cast(null as varchar) as separation_reason,
    from unscored
    union all
    select
        unscored_accuracy.run_id,
        unscored_accuracy.metric,
        'accuracy' as metric_family,
        cast(null as varchar) as outcome,
        true as is_default_outcome,
        unscored_accuracy.perturbation_id,
        unscored_accuracy.system_id,
        cast(null as double) as raw_score,
        cast(null as integer) as rating,
        {{ var('rating_levels') }} as rating_levels,
        unscored_accuracy.higher_is_better,
        cast(null as integer) as rank,
        'not rated: ' || {{ unrated_reason(
            'unscored_accuracy.mean', 'mean', 'the mean is undefined (no window has a value)'
        ) }} as rating_reason,
        cast(null as double) as score_spread,
        cast(null as boolean) as separable,
        cast(null as varchar) as separation_reason,
    from unscored_accuracy
),

final as (
    select
        cast(assigned.run_id as varchar) as run_id,
        cast(selected_run.study_id as varchar) as study_id,
        cast(assigned.metric as varchar) as metric,
        cast(assigned.metric_family as varchar) as metric_family,
        cast(assigned.outcome as varchar) as outcome,
        cast(assigned.is_default_outcome as boolean) as is_default_outcome,
        cast(assigned.perturbation_id as varchar) as perturbation_id,
        cast(assigned.system_id as varchar) as system_id,
        cast(systems.display_name as varchar) as display_name,
        cast(assigned.raw_score as double) as raw_score,
        cast(assigned.rating as integer) as rating,
        cast(assigned.rating_levels as integer) as rating_levels,
        cast(assigned.higher_is_better as boolean) as higher_is_better,
        cast(assigned.rank as integer) as rank,
        cast(count(assigned.raw_score) over (
            partition by assigned.run_id, assigned.metric, assigned.perturbation_id, assigned.outcome
        ) as integer) as n_systems,
        cast(array_to_string(list_sort(list(assigned.system_id) filter (
            where assigned.raw_score is not null
        ) over (
            partition by assigned.run_id, assigned.metric, assigned.perturbation_id, assigned.outcome
        )), ' ') as varchar) as systems_rated_together,
        cast(assigned.rating_reason as varchar) as rating_reason,
        cast(assigned.score_spread as double) as score_spread,
        cast(coalesce(assigned.separable, bootstrapped.separable) as boolean) as separable,
        cast(case
            when assigned.separable is not null then assigned.separation_reason
            else bootstrapped.separation_reason
        end as varchar) as separation_reason,
    from rated_and_unrated as assigned
    left join systems
        on systems.system_id = assigned.system_id
    left join selected_run
        on selected_run.run_id = assigned.run_id
    left join bootstrapped
        on bootstrapped.run_id = assigned.run_id
        and bootstrapped.metric = assigned.metric
        and bootstrapped.perturbation_id = assigned.perturbation_id
        and bootstrapped.system_id = assigned.system_id
        and bootstrapped.outcome is not distinct from assigned.outcome
        and assigned.raw_score is not null
)

select * from final
