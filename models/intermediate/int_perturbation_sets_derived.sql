{#- The perturbations each system's confounded treatment draws may use: the ones it accepts
    (systems seed) among the ones it was run on in window_errors. -#}
with

window_errors as (
    select * from {{ ref('window_errors') }}
),

systems as (
    select * from {{ ref('stg_systems') }}
),

perturbations_run as (
    select distinct
        run_id,
        system_id,
        perturbation_id,
    from window_errors
),

accepted as (
    select
        system_id,
        unnest(regexp_split_to_array(trim(accepted_perturbations), '\s+')) as perturbation_id,
    from systems
    where nullif(trim(accepted_perturbations), '') is not null
),

flagged as (
    select
        perturbations_run.run_id,
        perturbations_run.system_id,
        perturbations_run.perturbation_id,
        systems.system_id is not null as is_in_systems_seed,
        accepted.perturbation_id is not null or systems.system_id is null as is_drawable,
    from perturbations_run
    left join systems
        on systems.system_id = perturbations_run.system_id
    left join accepted
        on accepted.system_id = perturbations_run.system_id
        and accepted.perturbation_id = perturbations_run.perturbation_id
),

per_system as (
    select
        run_id,
        system_id,
        string_agg(perturbation_id, ' ' order by perturbation_id) filter (where is_drawable) as perturbation_set,
        string_agg(perturbation_id, ' ' order by perturbation_id) as perturbations_run,
        cast(count(*) filter (where is_drawable and perturbation_id <> 'P0') as integer) as n_treatments,
        coalesce(bool_or(is_drawable and perturbation_id = 'P0'), false) as has_control,
        bool_or(is_in_systems_seed) as is_in_systems_seed,
    from flagged
    group by run_id, system_id
),

final as (
    select
        run_id,
        system_id,
        perturbation_set,
        perturbations_run,
        n_treatments,
        has_control,
        has_control and n_treatments > 0 as has_effects,
        is_in_systems_seed,
    from per_system
)

select * from final
