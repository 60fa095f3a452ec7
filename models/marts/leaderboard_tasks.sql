{#- One row per metric, task (ticker x perturbation) and system of the selected run: the
    task error (test_error) = the mean over the task's windows of the per-window metric, with
    the partition's compute time. What the leaderboard ranks and `tsrate export --format fev`
    writes as fev evaluation summaries. -#}
with

window_errors as (
    select * from {{ ref('window_errors') }}
),

window_quantile_scores as (
    select * from {{ ref('window_quantile_scores') }}
),

windows as (
    select
        window_errors.run_id,
        window_errors.system_id,
        window_errors.ticker,
        window_errors.perturbation_id,
        window_errors.window_end_date,
        window_errors.mase,
        window_errors.smape,
        window_quantile_scores.wql,
        window_quantile_scores.crps,
    from window_errors
    left join window_quantile_scores
        on window_quantile_scores.run_id = window_errors.run_id
        and window_quantile_scores.system_id = window_errors.system_id
        and window_quantile_scores.ticker = window_errors.ticker
        and window_quantile_scores.window_end_date = window_errors.window_end_date
        and window_quantile_scores.perturbation_id = window_errors.perturbation_id
),

long as (
    unpivot windows
    on mase, smape, wql, crps
    into name metric value metric_value
    {#- unpivot drops nulls: a system without quantiles has no wql rows, so no task error -#}
),

per_task as (
    select
        run_id,
        system_id,
        ticker,
        perturbation_id,
        cast(metric as varchar) as metric,
        avg(metric_value) as test_error,
        count(*) as n_windows,
    from long
    group by run_id, system_id, ticker, perturbation_id, metric
),

{#- Every system is scored on the same windows: the windows of a task where some system has
    a value of the metric (a flat context's mase has none, for every system alike), counted
    per system among its own windows. A system with fewer values than that (quantile
    forecasts on only some windows) has no task error: a failure, not a mean over a subset. -#}
scored_windows as (
    select distinct run_id, ticker, perturbation_id, window_end_date, metric from long
),

expected as (
    select
        windows.run_id,
        windows.system_id,
        windows.ticker,
        windows.perturbation_id,
        cast(scored_windows.metric as varchar) as metric,
        count(*) as n_expected,
    from windows
    inner join scored_windows
        on scored_windows.run_id = windows.run_id
        and scored_windows.ticker = windows.ticker
        and scored_windows.perturbation_id = windows.perturbation_id
        and scored_windows.window_end_date = windows.window_end_date
    group by all
),

grid as (
    select distinct
        windows.run_id,
        windows.system_id,
        windows.ticker,
        windows.perturbation_id,
        metrics.metric,
    from windows
    cross join (values ('mase'), ('smape'), ('wql'), ('crps')) as metrics (metric)
),

tasks as (
    select
        grid.run_id,
        grid.system_id,
        grid.ticker,
        grid.perturbation_id,
        grid.metric,
        case when per_task.n_windows = expected.n_expected then per_task.test_error end
            as test_error,
        coalesce(per_task.n_windows, 0) as n_windows,
    from grid
    left join per_task
        on per_task.run_id = grid.run_id
        and per_task.system_id = grid.system_id
        and per_task.ticker = grid.ticker
        and per_task.perturbation_id = grid.perturbation_id
        and per_task.metric = grid.metric
    left join expected
        on expected.run_id = grid.run_id
        and expected.system_id = grid.system_id
        and expected.ticker = grid.ticker
        and expected.perturbation_id = grid.perturbation_id
        and expected.metric = grid.metric
),

selected_run as (
    select run_id from {{ ref('int_runs_selected') }}
),

run_partitions as (
    select * from {{ ref('int_run_partitions_selected') }}
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
        cast(task_errors.ticker || ' ' || task_errors.perturbation_id as varchar) as task_id,
        cast(task_errors.ticker as varchar) as ticker,
        cast(task_errors.perturbation_id as varchar) as perturbation_id,
        cast(task_errors.system_id as varchar) as system_id,
        cast(task_errors.test_error as double) as test_error,
        cast(task_errors.n_windows as integer) as n_windows,
        cast(timings.inference_time_s as double) as inference_time_s,
    from tasks as task_errors
    left join timings
        on timings.run_id = task_errors.run_id
        and timings.system_id = task_errors.system_id
        and timings.ticker = task_errors.ticker
        and timings.perturbation_id = task_errors.perturbation_id
)

select * from final
