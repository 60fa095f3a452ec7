with

assigned as (
    {#- the default view: the paper's outcome (and every accuracy metric) -#}
    select * from {{ ref('int_ratings_assigned') }} where is_default_outcome
),

ordered as (
    select
        run_id,
        metric,
        perturbation_id,
        system_id,
        raw_score,
        rank,
        higher_is_better,
        count(*) over per_order as n_systems,
        {#- 4 decimals, or 4 significant digits where that is more (a score under 0.001,
            e.g. an APE at prices x 0.01, keeps its digits rather than reading 0.0001 or -0.0
            beside another) -#}
        string_agg(system_id || ': ' || cast(case
            when raw_score = 0 or not isfinite(raw_score) then raw_score
            else round(raw_score, greatest(4, 3 - cast(floor(log10(abs(raw_score))) as integer)))
        end as varchar), ', ') over (
            per_order
            order by rank, system_id
            rows between unbounded preceding and unbounded following
        ) as order_text,
    from assigned
    window per_order as (partition by run_id, metric, perturbation_id)
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(metric as varchar) as metric,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(system_id as varchar) as system_id,
        cast(raw_score as double) as raw_score,
        cast(rank as integer) as rank,
        cast(n_systems as integer) as n_systems,
        cast(higher_is_better as boolean) as higher_is_better,
        cast('{' || order_text || '}' as varchar) as partial_order,
    from ordered
)

select * from final
