{#- One row per metric, task (ticker x perturbation) and system of the selected run: the
    task error the leaderboard compares, with the partition's compute time. What
    `tsrate export --format fev` writes as fev evaluation summaries. -#}
with

task_errors as (
    select * from {{ ref('int_leaderboard_task_errors') }}
    where scope = 'all'
),

selected_run as (
    select run_id from {{ ref('int_runs_selected') }}
),

run_partitions as (
    select * from {{ ref('stg_run_partitions') }}
),

partitions as (
    select * from {{ ref('stg_forecast_partitions') }}
),

timings as (
    select
        selected_run.run_id,
        partitions.system_id,
        partitions.ticker,
        partitions.perturbation_id,
        sum(partitions.compute_seconds) as inference_time_s,
    from selected_run
    inner join run_partitions on run_partitions.run_id = selected_run.run_id
    inner join partitions on partitions.partition_key = run_partitions.partition_key
    group by all
),

final as (
    select
        cast(task_errors.run_id as varchar) as run_id,
        cast(task_errors.metric as varchar) as metric,
        cast(task_errors.task_id as varchar) as task_id,
        cast(task_errors.ticker as varchar) as ticker,
        cast(task_errors.perturbation_id as varchar) as perturbation_id,
        cast(task_errors.system_id as varchar) as system_id,
        cast(task_errors.test_error as double) as test_error,
        cast(task_errors.n_windows as integer) as n_windows,
        cast(timings.inference_time_s as double) as inference_time_s,
    from task_errors
    left join timings
        on timings.run_id = task_errors.run_id
        and timings.system_id = task_errors.system_id
        and timings.ticker = task_errors.ticker
        and timings.perturbation_id = task_errors.perturbation_id
)

select * from final
