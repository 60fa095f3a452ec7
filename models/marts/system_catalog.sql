{#- Every system the warehouse knows, for readers of the published snapshot: the systems seed
    plus the systems registered by `tsrate import-predictions --metadata` (the snapshot holds
    marts and seeds, not raw or staging tables, so without this mart a registered system's
    display name and labels would not reach BI tools or the report). -#}
with

systems as (
    select * from {{ ref('stg_systems') }}
),

final as (
    select
        system_id,
        display_name,
        paper_symbol,
        modality,
        family,
        purpose,
        architecture,
        is_foundation_model,
        accepted_perturbations,
        implementation,
        description,
        base_model,
        paper_architecture,
        origin,
    from systems
)

select * from final
