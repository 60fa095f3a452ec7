{#- One row per window with quantile forecasts: its probabilistic metrics (conventions in
    docs/probabilistic.md), over the window's horizon steps t and the 9 levels q:
    wql = 2 * sum_t,q pinball / (9 * sum_t |actual|)          (fev's WQL, one window)
    crps = 2 * sum_t,q pinball / (9 * steps)                  (quantile-based CRPS, price units)
    msis = mean_t interval score of [q10, q90] / mase_scale   (alpha = 0.2, scaled like MASE)
    coverage_80 = share of steps with q10 <= actual <= q90
    coverage_error_80 = |coverage_80 - 0.8|                   (absolute miscalibration; lower is better)
    n_crossed_steps = steps whose quantiles decrease somewhere along the levels (quantile
    crossing; the metrics use the quantiles as stored, as fev does)
    Read by window_quantile_scores (the published metrics and crossed-step counts) and
    window_errors (the probabilistic outcomes of the robustness analysis). -#}
with

steps as (
    select * from {{ ref('int_forecast_quantiles_scored') }}
),

per_window as (
    select
        run_id,
        system_id,
        ticker,
        window_end_date,
        perturbation_id,
        2.0 * sum(quantile_loss_sum) / (9.0 * nullif(sum(abs(actual)), 0)) as wql,
        2.0 * sum(quantile_loss_sum) / (9.0 * count(*)) as crps,
        avg(interval_score_80) / nullif(any_value(mase_scale), 0) as msis,
        avg(case when is_covered_80 then 1.0 else 0.0 end) as coverage_80,
        count(*) as n_quantile_steps,
        {#- a step crosses when its quantiles, in level order, are not already sorted:
            some neighbour pair decreases (the quantiles are not null: stg_forecast_quantiles'
            tests; 8 comparisons cost a fifth of sorting each step's list and comparing) -#}
        count(*) filter (
            where q20 < q10 or q30 < q20 or q40 < q30 or q50 < q40
                or q60 < q50 or q70 < q60 or q80 < q70 or q90 < q80
        ) as n_crossed_steps,
    from steps
    group by run_id, system_id, ticker, window_end_date, perturbation_id
),

final as (
    select
        run_id,
        system_id,
        ticker,
        window_end_date,
        perturbation_id,
        cast(wql as double) as wql,
        cast(crps as double) as crps,
        cast(msis as double) as msis,
        cast(coverage_80 as double) as coverage_80,
        cast(abs(coverage_80 - 0.8) as double) as coverage_error_80,
        cast(n_quantile_steps as integer) as n_quantile_steps,
        cast(n_crossed_steps as integer) as n_crossed_steps,
    from per_window
)

select * from final
