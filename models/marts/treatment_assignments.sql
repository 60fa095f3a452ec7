{#- The public face of int_treatments_assigned: its columns in a fixed order and type (the contract). -#}
with

computed as (
    select * from {{ ref('int_treatments_assigned') }}
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(perturbation_set as varchar) as perturbation_set,
        cast(distribution_id as varchar) as distribution_id,
        cast(confounder as varchar) as confounder,
        cast(favored_value as varchar) as favored_value,
        cast(ticker as varchar) as ticker,
        cast(industry as varchar) as industry,
        cast(window_end_date as date) as window_end_date,
        cast(perturbation_id as varchar) as perturbation_id,
        cast(is_favored as boolean) as is_favored,
    from computed
)

select * from final
