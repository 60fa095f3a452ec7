{#- Every system the marts know: the systems seed, plus the language models registered
    under their own id by `tsrate register-llm` (raw.registered_llms), plus the systems
    registered by `tsrate import-predictions --metadata` (raw.imported_systems). Both raw
    tables are append-only: the latest registration of an id wins; a seed row wins over a
    registration of the same id, and a registered language model over an import. An import
    states its training corpus and cutoff when its --metadata gives them (training_reason,
    as the seed's, says which is not recorded). -#}

with

seeded as (
    select * from {{ ref('systems') }}
),

registered as (
    select * from {{ source('raw', 'imported_systems') }}
),

llms as (
    select * from {{ source('raw', 'registered_llms') }}
),

latest_llm as (
    select *
    from llms
    qualify 1 = row_number() over (partition by system_id order by registered_at desc)
),

latest_registration as (
    select *
    from registered
    qualify row_number() over (partition by system_id order by registered_at desc) = 1
),

from_seed as (
    select
        cast(system_id as varchar) as system_id,
        cast(display_name as varchar) as display_name,
        cast(paper_symbol as varchar) as paper_symbol,
        cast(modality as varchar) as modality,
        cast(family as varchar) as family,
        cast(purpose as varchar) as purpose,
        cast(architecture as varchar) as architecture,
        cast(is_foundation_model as boolean) as is_foundation_model,
        cast(accepted_perturbations as varchar) as accepted_perturbations,
        cast(implementation as varchar) as implementation,
        cast(description as varchar) as description,
        cast(base_model as varchar) as base_model,
        cast(paper_architecture as varchar) as paper_architecture,
        cast(training_corpus as varchar) as training_corpus,
        cast(training_cutoff as date) as training_cutoff,
        cast(training_reason as varchar) as training_reason,
        cast('seed' as varchar) as origin,
    from seeded
),

from_llms as (
    select
        cast(system_id as varchar) as system_id,
        cast(display_name as varchar) as display_name,
        cast(null as varchar) as paper_symbol,
        cast(modality as varchar) as modality,
        cast('foundation' as varchar) as family,
        cast('general-purpose' as varchar) as purpose,
        cast(null as varchar) as architecture,
        cast(null as boolean) as is_foundation_model,
        cast(
            case when modality = 'numeric+image' then 'P0 P1 P2 P3 P4 P5 P6' else 'P0 P1 P2 P3' end
            as varchar
        ) as accepted_perturbations,
        cast('tsrate.systems.llm:' || system_id as varchar) as implementation,
        cast(
            'Language model ' || model || ' at ' || base_url
            || ', registered by `tsrate register-llm`' as varchar
        ) as description,
        cast(null as varchar) as base_model,
        cast(null as varchar) as paper_architecture,
        cast(null as varchar) as training_corpus,
        cast(null as date) as training_cutoff,
        cast('the model is whichever one the registered endpoint serves' as varchar)
            as training_reason,
        cast('registered' as varchar) as origin,
    from latest_llm
    where system_id not in (select system_id from seeded)
),

from_imports as (
    select
        cast(system_id as varchar) as system_id,
        cast(display_name as varchar) as display_name,
        cast(paper_symbol as varchar) as paper_symbol,
        cast(modality as varchar) as modality,
        cast(family as varchar) as family,
        cast(purpose as varchar) as purpose,
        cast(architecture as varchar) as architecture,
        cast(is_foundation_model as boolean) as is_foundation_model,
        cast(accepted_perturbations as varchar) as accepted_perturbations,
        cast(null as varchar) as implementation,
        cast(description as varchar) as description,
        cast(base_model as varchar) as base_model,
        cast(null as varchar) as paper_architecture,
        cast(training_corpus as varchar) as training_corpus,
        cast(training_cutoff as date) as training_cutoff,
        -- as the seed: a reason only when a column is null, naming which
        cast(case
            when training_corpus is null and training_cutoff is null
                then 'imported predictions: their training data is not recorded'
            when training_cutoff is null
                then 'imported predictions: their training cutoff is not recorded'
            when training_corpus is null
                then 'imported predictions: their training corpus is not recorded'
        end as varchar) as training_reason,
        cast('imported' as varchar) as origin,
    from latest_registration
    where system_id not in (select system_id from seeded)
        and system_id not in (select system_id from latest_llm)
),

final as (
    select * from from_seed
    union all
    select * from from_llms
    union all
    select * from from_imports
)

select * from final
