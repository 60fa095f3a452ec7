{#- Failed windows per system and perturbation of the selected run, and what they cost
    every system's scores (see int_forecasts_selected: a window that any system failed is
    left out for all systems and perturbations); and the windows a system did not really
    forecast (its last-value fallback, scored as its forecast): null where some partition
    of the cell was stored before fallbacks were recorded. Windows whose forecast repeats a
    stretch of the system's own input (stg_forecast_copies, also scored as its forecasts):
    null where some partition of the cell has no count. -#}
with

selected_run as (
    select run_id from {{ ref('int_runs_selected') }}
),

run_partitions as (
    select * from {{ ref('int_run_partitions_selected') }}
),

partitions as (
    select * from {{ ref('stg_forecast_partitions') }}
),

failures as (
    select * from {{ ref('stg_forecast_failures') }}
),

fallbacks as (
    select * from {{ ref('stg_forecast_fallbacks') }}
),

copies as (
    select * from {{ ref('stg_forecast_copies') }}
),

run_partition_list as (
    select
        selected_run.run_id,
        partitions.partition_key,
        partitions.system_id,
        partitions.ticker,
        partitions.perturbation_id,
        partitions.n_windows,
        partitions.n_fallback_windows,
        copies.n_copied_windows,
    from selected_run
    inner join run_partitions on run_partitions.run_id = selected_run.run_id
    inner join partitions on partitions.partition_key = run_partitions.partition_key
    left join copies on copies.partition_key = run_partitions.partition_key
),

run_failures as (
    select
        run_partition_list.run_id,
        failures.system_id,
        failures.ticker,
        failures.window_end_date,
        failures.perturbation_id,
        failures.failure_reason,
    from run_partition_list
    inner join failures on failures.partition_key = run_partition_list.partition_key
),

excluded_windows as (
    select distinct
        ticker,
        window_end_date,
    from run_failures
),

windows_per_cell as (
    select
        run_id,
        system_id,
        perturbation_id,
        sum(n_windows) as n_windows,
        -- known only when every partition of the cell recorded its fallbacks
        count(*) = count(n_fallback_windows) as fallbacks_known,
        -- likewise the copies: known only when every partition of the cell counted them
        case when count(*) = count(n_copied_windows) then sum(n_copied_windows) end
            as n_copied_windows,
    from run_partition_list
    group by run_id, system_id, perturbation_id
),

fallbacks_per_cell as (
    select
        run_partition_list.system_id,
        run_partition_list.perturbation_id,
        count(*) as n_fallback_windows,
    from run_partition_list
    inner join fallbacks on fallbacks.partition_key = run_partition_list.partition_key
    group by run_partition_list.system_id, run_partition_list.perturbation_id
),

excluded_per_cell as (
    select
        cells.system_id,
        cells.perturbation_id,
        count(excluded_windows.window_end_date) as n_windows_excluded,
    from (
        select distinct system_id, perturbation_id, ticker from run_partition_list
    ) as cells
    left join excluded_windows on excluded_windows.ticker = cells.ticker
    group by cells.system_id, cells.perturbation_id
),

failures_per_cell as (
    select
        system_id,
        perturbation_id,
        count(*) as n_failed_windows,
        mode(failure_reason) as most_common_reason,
    from run_failures
    group by system_id, perturbation_id
),

final as (
    select
        windows_per_cell.run_id,
        windows_per_cell.system_id,
        windows_per_cell.perturbation_id,
        cast(windows_per_cell.n_windows as bigint) as n_windows,
        cast(coalesce(failures_per_cell.n_failed_windows, 0) as bigint) as n_failed_windows,
        coalesce(failures_per_cell.n_failed_windows, 0) / windows_per_cell.n_windows
            as failure_rate,
        cast(excluded_per_cell.n_windows_excluded as bigint) as n_windows_excluded,
        cast(windows_per_cell.n_windows - excluded_per_cell.n_windows_excluded as bigint)
            as n_windows_rated,
        failures_per_cell.most_common_reason,
        case
            when windows_per_cell.fallbacks_known
                then cast(coalesce(fallbacks_per_cell.n_fallback_windows, 0) as bigint)
        end as n_fallback_windows,
        case
            when windows_per_cell.fallbacks_known
                then coalesce(fallbacks_per_cell.n_fallback_windows, 0) / windows_per_cell.n_windows
        end as fallback_share,
        cast(windows_per_cell.n_copied_windows as bigint) as n_copied_windows,
        windows_per_cell.n_copied_windows / windows_per_cell.n_windows as copied_share,
    from windows_per_cell
    inner join excluded_per_cell
        on excluded_per_cell.system_id = windows_per_cell.system_id
        and excluded_per_cell.perturbation_id = windows_per_cell.perturbation_id
    left join failures_per_cell
        on failures_per_cell.system_id = windows_per_cell.system_id
        and failures_per_cell.perturbation_id = windows_per_cell.perturbation_id
    left join fallbacks_per_cell
        on fallbacks_per_cell.system_id = windows_per_cell.system_id
        and fallbacks_per_cell.perturbation_id = windows_per_cell.perturbation_id
)

select * from final
