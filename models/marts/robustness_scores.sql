{#- The robustness metrics in one long table: WRS (statistical bias) and the worst-case
    APE / PIE (confounding) of every system and perturbation. -#}
with

wrs as (
    select * from {{ ref('wrs') }}
),

effect_scores as (
    select * from {{ ref('perturbation_effect_scores') }}
),

wrs_rows as (
    select
        run_id,
        system_id,
        perturbation_id,
        metric,
        'wrs' as measure,
        analysis as confounder,
        raw_score,
        max_score,
        n_pairs,
        cast(null as integer) as n_distributions,
        cast(null as varchar) as worst_distribution_id,
        cast(null as double) as oracle_score,
        'sum' as aggregation,
        cast(null as varchar) as estimand,
    from wrs
),

effect_rows as (
    select
        run_id,
        system_id,
        perturbation_id,
        metric,
        measure,
        confounder,
        raw_score,
        cast(null as double) as max_score,
        cast(null as integer) as n_pairs,
        n_distributions,
        worst_distribution_id,
        oracle_score,
        aggregation,
        estimand,
    from effect_scores
),

unioned as (
    select * from wrs_rows
    union all
    select * from effect_rows
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(system_id as varchar) as system_id,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(metric as varchar) as metric,
        cast(measure as varchar) as measure,
        cast(confounder as varchar) as confounder,
        cast(raw_score as double) as raw_score,
        false as higher_is_better,
        cast(max_score as double) as max_score,
        cast(n_pairs as integer) as n_pairs,
        cast(n_distributions as integer) as n_distributions,
        cast(worst_distribution_id as varchar) as worst_distribution_id,
        cast(oracle_score as double) as oracle_score,
        cast(aggregation as varchar) as aggregation,
        cast(estimand as varchar) as estimand,
    from unioned
)

select * from final
