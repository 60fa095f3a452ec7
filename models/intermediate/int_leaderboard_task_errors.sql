{#- One row per run, scope, metric, task and system: the task's error (test_error) = the mean
    over the task's windows of the per-window metric. A task is one ticker under one
    perturbation; scope 'all' holds every ticker x perturbation of the run, scope <Pk> the
    tickers under Pk. block_id (the ticker) groups the tasks the bootstrap resamples together. -#}
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
        per_task.test_error,
        coalesce(per_task.n_windows, 0) as n_windows,
    from grid
    left join per_task
        on per_task.run_id = grid.run_id
        and per_task.system_id = grid.system_id
        and per_task.ticker = grid.ticker
        and per_task.perturbation_id = grid.perturbation_id
        and per_task.metric = grid.metric
),

final as (
    select
        run_id,
        'all' as scope,
        metric,
        ticker || ' ' || perturbation_id as task_id,
        ticker as block_id,
        ticker,
        perturbation_id,
        system_id,
        cast(test_error as double) as test_error,
        cast(n_windows as integer) as n_windows,
    from tasks
    union all
    select
        run_id,
        perturbation_id as scope,
        metric,
        ticker || ' ' || perturbation_id as task_id,
        ticker as block_id,
        ticker,
        perturbation_id,
        system_id,
        cast(test_error as double) as test_error,
        cast(n_windows as integer) as n_windows,
    from tasks
)

select * from final
