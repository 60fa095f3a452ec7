{#- Table 2, "comparison across perturbations": each perturbation's average per metric over systems. -#}
with

ratings as (
    {#- the default view: the paper's outcome (and every accuracy metric) -#}
    {#- scores that could not be computed (null raw_score, 'not rated: ...') are not averaged -#}
    select * from {{ ref('ratings') }} where is_default_outcome and raw_score is not null
),

perturbations as (
    select * from {{ ref('perturbations') }}
),

per_perturbation as (
    select
        run_id,
        perturbation_id,
        metric,
        any_value(metric_family) as metric_family,
        count(*) as n_systems,
        string_agg(system_id, ' ' order by system_id) as system_ids,
        avg(raw_score) as avg_raw_score,
        min(raw_score) as min_raw_score,
        max(raw_score) as max_raw_score,
        avg(rating) as avg_rating,
        any_value(rating_levels) as rating_levels,
        bool_and(higher_is_better) as higher_is_better,
    from ratings
    group by run_id, perturbation_id, metric
),

final as (
    select
        per_perturbation.run_id,
        per_perturbation.perturbation_id,
        cast(perturbations.name as varchar) as perturbation_name,
        per_perturbation.metric,
        cast(per_perturbation.metric_family as varchar) as metric_family,
        cast(per_perturbation.n_systems as integer) as n_systems,
        cast(per_perturbation.system_ids as varchar) as system_ids,
        cast(per_perturbation.avg_raw_score as double) as avg_raw_score,
        cast(per_perturbation.min_raw_score as double) as min_raw_score,
        cast(per_perturbation.max_raw_score as double) as max_raw_score,
        cast(per_perturbation.avg_rating as double) as avg_rating,
        cast(per_perturbation.rating_levels as integer) as rating_levels,
        cast(per_perturbation.higher_is_better as boolean) as higher_is_better,
    from per_perturbation
    left join perturbations
        on perturbations.perturbation_id = per_perturbation.perturbation_id
)

select * from final
