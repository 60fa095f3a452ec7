{#- The public face of int_wrs_pairs_tested: its columns in a fixed order and type (the contract). -#}
with

computed as (
    select * from {{ ref('int_wrs_pairs_tested') }}
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(analysis as varchar) as analysis,
        cast(outcome as varchar) as outcome,
        cast(system_id as varchar) as system_id,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(within_group as varchar) as within_group,
        cast(group_a as varchar) as group_a,
        cast(group_b as varchar) as group_b,
        cast(n_a as bigint) as n_a,
        cast(n_b as bigint) as n_b,
        cast(mean_a as double) as mean_a,
        cast(mean_b as double) as mean_b,
        cast(t_statistic as double) as t_statistic,
        cast(dof as bigint) as dof,
        cast(p_value as double) as p_value,
        cast(confidence as double) as confidence,
        cast(weight as double) as weight,
        cast(alpha as double) as alpha,
        cast(t_critical as double) as t_critical,
        cast(rejected as boolean) as rejected,
        cast(weighted_rejection as double) as weighted_rejection,
    from computed
)

select * from final
