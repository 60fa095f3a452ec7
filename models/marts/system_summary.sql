{#- Table 2, "comparison across systems": each system's average per metric over perturbations. -#}
with

ratings as (
    {#- the default view: the paper's outcome (and every accuracy metric) -#}
    {#- scores that could not be computed (null raw_score, 'not rated: ...') are not averaged -#}
    select * from {{ ref('ratings') }} where is_default_outcome and raw_score is not null
),

final as (
    select
        run_id,
        system_id,
        cast(any_value(display_name) as varchar) as display_name,
        metric,
        cast(any_value(metric_family) as varchar) as metric_family,
        cast(count(*) as integer) as n_perturbations,
        cast(string_agg(perturbation_id, ' ' order by perturbation_id) as varchar) as perturbation_ids,
        cast(avg(raw_score) as double) as avg_raw_score,
        cast(min(raw_score) as double) as min_raw_score,
        cast(max(raw_score) as double) as max_raw_score,
        cast(avg(rating) as double) as avg_rating,
        cast(any_value(rating_levels) as integer) as rating_levels,
        cast(bool_and(higher_is_better) as boolean) as higher_is_better,
    from ratings
    group by run_id, system_id, metric
)

select * from final
