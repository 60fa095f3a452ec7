{#- The public face of int_ratings_bootstrapped: its columns in a fixed order and type (the contract). -#}
with

computed as (
    select * from {{ ref('int_ratings_bootstrapped') }}
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(metric as varchar) as metric,
        cast(outcome as varchar) as outcome,
        cast(system_id as varchar) as system_id,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(raw_score as double) as raw_score,
        cast(rating as bigint) as rating,
        cast(ci_low as double) as ci_low,
        cast(ci_high as double) as ci_high,
        cast(rating_level as bigint) as rating_level,
        cast(share as double) as share,
        cast(rating_levels as bigint) as rating_levels,
        cast(n_resamples as bigint) as n_resamples,
        cast(n_valid as bigint) as n_valid,
        cast(higher_is_better as boolean) as higher_is_better,
        cast(block_length as bigint) as block_length,
        cast(bootstrap_seed as bigint) as bootstrap_seed,
        cast(confidence as double) as confidence,
        cast(separable as boolean) as separable,
        cast(separation_reason as varchar) as separation_reason,
    from computed
)

select * from final
