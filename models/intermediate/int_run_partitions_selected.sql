{#- The forecast partitions the marts rate, labelled with the selected run's id.

    Scope 'study' (int_runs_selected.selection_scope, the default): every system that has
    forecasts in a run of the selected run's study with complete forecasts, started no later
    than the selected run, from the newest such run per system (the selected run's own
    systems always from itself). So a system imported black-box (`tsrate
    import-predictions`, a run of the same study) stays rated after a later `tsrate run` of
    the study that re-forecasts only the baselines. A system withdrawn from the study
    (`tsrate withdraw`, stg_study_withdrawals) is left out of every run of the study started
    before its newest withdrawal there, so only a later run or import of it brings it back;
    nothing is deleted. Scope 'run': the selected run's own
    partitions only (`tsrate build --run-id`, the single-run view). -#}
with

selected_run as (
    select run_id, study_id, started_at, selection_scope from {{ ref('int_runs_selected') }}
),

runs as (
    select * from {{ ref('stg_runs') }}
),

run_partitions as (
    select * from {{ ref('stg_run_partitions') }}
),

partitions as (
    select partition_key, system_id from {{ ref('stg_forecast_partitions') }}
),

withdrawals as (
    select study_id, system_id, max(withdrawn_at) as withdrawn_at,
    from {{ ref('stg_study_withdrawals') }}
    group by study_id, system_id
),

candidate_runs as (
    select
        selected_run.run_id as selected_run_id,
        runs.run_id as source_run_id,
        runs.study_id as source_study_id,
        runs.started_at,
        selected_run.selection_scope,
        runs.run_id = selected_run.run_id as is_selected_run,
    from selected_run
    inner join runs
        on runs.run_id = selected_run.run_id
        or (
            selected_run.selection_scope = 'study'
            and runs.study_id = selected_run.study_id
            and runs.started_at <= selected_run.started_at
            and runs.run_status in ('forecasted', 'succeeded', 'build_failed', 'publish_failed')
        )
),

system_partitions as (
    select
        candidate_runs.*,
        partitions.system_id,
        run_partitions.partition_key,
        run_partitions.is_reused,
    from candidate_runs
    inner join run_partitions on run_partitions.run_id = candidate_runs.source_run_id
    inner join partitions on partitions.partition_key = run_partitions.partition_key
    left join withdrawals
        on withdrawals.study_id = candidate_runs.source_study_id
        and withdrawals.system_id = partitions.system_id
    where not (
        candidate_runs.selection_scope = 'study'
        and withdrawals.withdrawn_at is not null
        and candidate_runs.started_at < withdrawals.withdrawn_at
    )
),

source_per_system as (
    select distinct
        system_id,
        source_run_id,
        is_selected_run,
        started_at,
    from system_partitions
    qualify row_number() over (
        partition by system_id
        order by is_selected_run desc, started_at desc, source_run_id desc
    ) = 1
),

final as (
    select
        system_partitions.selected_run_id as run_id,
        system_partitions.source_run_id,
        system_partitions.partition_key,
        system_partitions.system_id,
        system_partitions.is_reused,
    from system_partitions
    inner join source_per_system
        on source_per_system.system_id = system_partitions.system_id
        and source_per_system.source_run_id = system_partitions.source_run_id
)

select * from final
