with

steps as (
    select * from {{ ref('int_forecasts_scored') }}
),

companies as (
    select * from {{ ref('int_companies_selected') }}
),

windows as (
    select * from {{ ref('int_windows_located') }}
),

quantile_metrics as (
    select * from {{ ref('int_window_quantile_metrics') }}
),

per_window as (
    select
        run_id,
        system_id,
        ticker,
        window_end_date,
        perturbation_id,
        max(abs_residual) as max_abs_residual,
        avg(residual) as mean_residual,
        avg(smape_term) as smape,
        avg(abs_residual) / nullif(any_value(mase_scale), 0) as mase,
        100.0 * avg(case when is_sign_match then 1.0 else 0.0 end) as sign_accuracy,
        count(*) as n_steps,
    from steps
    group by run_id, system_id, ticker, window_end_date, perturbation_id
),

final as (
    select
        per_window.run_id,
        per_window.system_id,
        per_window.ticker,
        companies.company_name,
        companies.industry,
        per_window.window_end_date,
        per_window.perturbation_id,
        per_window.max_abs_residual,
        {#- Scale-free R^max: divided by the window's last clean context value (the price at
            the forecast origin), known when the forecast is made and the same for every
            perturbation of the window, so effects between perturbations stay comparable. -#}
        cast(windows.last_context_value as double) as last_context_value,
        cast(per_window.max_abs_residual / nullif(abs(windows.last_context_value), 0) as double)
            as relative_max_abs_residual,
        per_window.mean_residual,
        per_window.smape,
        per_window.mase,
        per_window.sign_accuracy,
        cast(per_window.n_steps as integer) as n_steps,
        {#- The probabilistic outcomes of the robustness analysis (var robustness_outcomes):
            the window's WQL and the absolute miscalibration of its 80 % interval,
            |coverage_80 - 0.8| (lower is better for both); null when the system gave no
            quantile forecasts for the window. -#}
        cast(quantile_metrics.wql as double) as wql,
        cast(quantile_metrics.coverage_error_80 as double) as coverage_error_80,
    from per_window
    left join companies on companies.ticker = per_window.ticker
    left join windows
        on windows.run_id = per_window.run_id
        and windows.ticker = per_window.ticker
        and windows.window_end_date = per_window.window_end_date
    left join quantile_metrics
        on quantile_metrics.run_id = per_window.run_id
        and quantile_metrics.system_id = per_window.system_id
        and quantile_metrics.ticker = per_window.ticker
        and quantile_metrics.window_end_date = per_window.window_end_date
        and quantile_metrics.perturbation_id = per_window.perturbation_id
)

select * from final
