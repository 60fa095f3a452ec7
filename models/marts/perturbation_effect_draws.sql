{#- The public face of int_perturbation_effects_estimated's per-draw rows (draw not null), the very values perturbation_effects averages: its columns in a fixed order and type (the contract). -#}
with

computed as (
    select * from {{ ref('int_perturbation_effects_estimated') }}
    where draw is not null
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(system_id as varchar) as system_id,
        cast(distribution_id as varchar) as distribution_id,
        cast(confounder as varchar) as confounder,
        cast(favored_value as varchar) as favored_value,
        cast(perturbation_set as varchar) as perturbation_set,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(outcome as varchar) as outcome,
        cast(draw as bigint) as draw,
        cast(n_treated as bigint) as n_treated,
        cast(n_control as bigint) as n_control,
        cast(ape_observational as double) as ape_observational,
        cast(ape_matched as double) as ape_matched,
        cast(ape_oracle as double) as ape_oracle,
        cast(matching_error as double) as matching_error,
        cast(pie_percent as double) as pie_percent,
        cast(strata_without_overlap as bigint) as strata_without_overlap,
        cast(n_strata as bigint) as n_strata,
        cast(estimand as varchar) as estimand,
    from computed
)

select * from final
