{#- Which perturbation hurts which system's uncertainty, and by how much beyond noise: per
    system x perturbation x probabilistic outcome (wql; coverage_error_80 = |coverage_80 -
    0.8|), the mean over every window of outcome(perturbed) - outcome(clean P0), i.e. the
    true (oracle) average effect, with a 95 % interval centred on that very mean and robust to
    CLUSTERS of windows: a cluster is one ticker's windows whose origins fall in the same
    stretch of `horizon` trading days (windows of one cluster share target days and are not
    independent; clusters barely overlap), counted in the series the run forecast
    (int_windows_located.end_position), so a day merged into raw.prices later moves no edge. The standard error is the cluster-robust (CR1,
    Liang-Zeger) one of a mean: se^2 = G / (G - 1) * sum over clusters g of (sum over g's
    windows of (change - mean_change))^2 / N^2, G the clusters with at least one change, N
    the changes; the interval is mean_change -/+ t_{0.975, G - 1} * se. This is statsmodels'
    OLS of the changes on a constant with cov_type 'cluster' (its default small-sample
    factor G / (G - 1) * (N - 1) / (N - K) is G / (G - 1) for K = 1) and use_t=True (then
    its df_correction takes G - 1 degrees of freedom; without use_t it gives a normal
    interval). With clusters of equal size it is the t interval over the cluster means (sd of
    the cluster means / sqrt(G)). Every cluster mean the same: se 0. beyond_noise = the
    interval excludes 0 (at se 0: the change is not 0). Beside it, the confounded estimate of
    robustness_scores (worst-case APE over the distributions, its spread over treatment
    draws) and the signed mean coverage change. Systems without quantile forecasts: null and
    the reason. A window's change within floating noise of 0 (|change| <= 1e-12 x max(1,
    |clean|, |perturbed|), the rule of tsrate.methods.noise; macro noise_free_difference) is
    exactly 0: outcomes computed from the same forecasts in another summation order differ
    by such noise, and a mean of it with a standard error of it would test noise. -#}
{%- set outcomes = ['wql', 'coverage_error_80'] %}
with

window_errors as (
    select * from {{ ref('window_errors') }}
),

quantile_metrics as (
    select * from {{ ref('int_window_quantile_metrics') }}
),

windows as (
    select * from {{ ref('int_windows_located') }}
),

selected_run as (
    select run_id, horizon from {{ ref('int_runs_selected') }}
),

scores as (
    select * from {{ ref('robustness_scores') }}
),

clustered as (
    select
        window_errors.run_id,
        window_errors.system_id,
        window_errors.ticker,
        window_errors.window_end_date,
        window_errors.perturbation_id,
        window_errors.ticker || ':' || cast(floor(
            (windows.end_position - min(windows.end_position) over (partition by window_errors.run_id, window_errors.ticker))
            / greatest(selected_run.horizon, 1)
        ) as varchar) as cluster_id,
        window_errors.wql,
        window_errors.coverage_error_80,
        quantile_metrics.coverage_80,
    from window_errors
    inner join selected_run on selected_run.run_id = window_errors.run_id
    inner join windows
        on windows.run_id = window_errors.run_id
        and windows.ticker = window_errors.ticker
        and windows.window_end_date = window_errors.window_end_date
    left join quantile_metrics
        on quantile_metrics.run_id = window_errors.run_id
        and quantile_metrics.system_id = window_errors.system_id
        and quantile_metrics.ticker = window_errors.ticker
        and quantile_metrics.window_end_date = window_errors.window_end_date
        and quantile_metrics.perturbation_id = window_errors.perturbation_id
),

paired as (
    select
        perturbed.run_id,
        perturbed.system_id,
        perturbed.perturbation_id,
        perturbed.cluster_id,
        {%- for outcome in outcomes %}
        {{ noise_free_difference('perturbed.' ~ outcome, 'clean.' ~ outcome) }} as {{ outcome }}_change,
        clean.{{ outcome }} as {{ outcome }}_clean,
        perturbed.{{ outcome }} as {{ outcome }}_perturbed,
        {%- endfor %}
        {{ noise_free_difference('perturbed.coverage_80', 'clean.coverage_80') }} as coverage_80_change,
    from clustered as perturbed
    inner join clustered as clean
        on clean.run_id = perturbed.run_id
        and clean.system_id = perturbed.system_id
        and clean.ticker = perturbed.ticker
        and clean.window_end_date = perturbed.window_end_date
        and clean.perturbation_id = 'P0'
    where perturbed.perturbation_id <> 'P0'
),

long as (
    {%- for outcome in outcomes %}
    select
        run_id, system_id, perturbation_id, cluster_id,
        '{{ outcome }}' as outcome,
        {{ outcome }}_change as change,
        {{ outcome }}_clean as clean_value,
        {{ outcome }}_perturbed as perturbed_value,
        coverage_80_change,
    from paired
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

per_system as (
    select
        long.run_id,
        long.system_id,
        long.perturbation_id,
        long.outcome,
        avg(long.clean_value) as mean_clean,
        avg(long.perturbed_value) as mean_perturbed,
        avg(long.change) as mean_change,
        avg(long.coverage_80_change) as coverage_80_change,
        count(long.change) as n_windows,
        count(*) as n_pairs,
    from long
    group by all
),

per_cluster as (
    select
        long.run_id, long.system_id, long.perturbation_id, long.outcome, long.cluster_id,
        avg(long.change) as change,
        sum(long.change - per_system.mean_change) as deviation_sum,
        count(long.change) as n_windows,
    from long
    inner join per_system
        on per_system.run_id = long.run_id
        and per_system.system_id = long.system_id
        and per_system.perturbation_id = long.perturbation_id
        and per_system.outcome = long.outcome
    group by all
),

cluster_stats as (
    select
        run_id, system_id, perturbation_id, outcome,
        count(*) filter (where n_windows > 0) as n_clusters,
        -- every cluster's mean the same: each cluster's deviations from the window mean sum
        -- to 0, so the standard error is 0 exactly, not a rounding residue of the sums
        min(change) = max(change) as clusters_agree,
        sum(deviation_sum * deviation_sum) as deviation_squares,
    from per_cluster
    group by all
),

cluster_se as (
    select
        cluster_stats.run_id,
        cluster_stats.system_id,
        cluster_stats.perturbation_id,
        cluster_stats.outcome,
        cluster_stats.n_clusters,
        case when cluster_stats.n_clusters >= 2 then
            case when cluster_stats.clusters_agree then 0.0
            else sqrt(cast(cluster_stats.n_clusters as double) / (cluster_stats.n_clusters - 1)
                * cluster_stats.deviation_squares) / per_system.n_windows end
        end as change_se,
    from cluster_stats
    inner join per_system
        on per_system.run_id = cluster_stats.run_id
        and per_system.system_id = cluster_stats.system_id
        and per_system.perturbation_id = cluster_stats.perturbation_id
        and per_system.outcome = cluster_stats.outcome
),

estimates as (
    select
        run_id, system_id, perturbation_id, outcome,
        max(raw_score) filter (where metric = 'ape_industry') as ape_industry,
        max(score_spread) filter (where metric = 'ape_industry') as ape_industry_spread,
        max(raw_score) filter (where metric = 'ape_company') as ape_company,
        max(score_spread) filter (where metric = 'ape_company') as ape_company_spread,
        max(score_reason) as score_reason,
    from scores
    where measure = 'ape'
    group by all
),

final as (
    select
        cast(per_system.run_id as varchar) as run_id,
        cast(per_system.system_id as varchar) as system_id,
        cast(per_system.perturbation_id as varchar) as perturbation_id,
        cast(per_system.outcome as varchar) as outcome,
        cast(per_system.mean_clean as double) as mean_clean,
        cast(per_system.mean_perturbed as double) as mean_perturbed,
        cast(per_system.mean_change as double) as mean_change,
        cast(cluster_se.change_se as double) as change_se,
        cast(per_system.mean_change
            - {{ t_quantile_975('cluster_se.n_clusters - 1') }} * cluster_se.change_se as double) as change_ci_low,
        cast(per_system.mean_change
            + {{ t_quantile_975('cluster_se.n_clusters - 1') }} * cluster_se.change_se as double) as change_ci_high,
        cast(per_system.coverage_80_change as double) as coverage_80_change,
        cast(per_system.n_windows as integer) as n_windows,
        cast(coalesce(cluster_se.n_clusters, 0) as integer) as n_clusters,
        cast(case
            when per_system.n_windows < per_system.n_pairs or cluster_se.n_clusters < 2 then null
            when cluster_se.change_se = 0 then per_system.mean_change <> 0
            else abs(per_system.mean_change) > {{ t_quantile_975('cluster_se.n_clusters - 1') }}
                * cluster_se.change_se
        end as boolean) as beyond_noise,
        cast(estimates.ape_industry as double) as ape_industry,
        cast(estimates.ape_industry_spread as double) as ape_industry_spread,
        cast(estimates.ape_company as double) as ape_company,
        cast(estimates.ape_company_spread as double) as ape_company_spread,
        cast(case
            when per_system.n_windows = 0 then 'the system gives no quantile forecasts (or they were not stored for this run)'
            when per_system.n_windows < per_system.n_pairs then
                (per_system.n_pairs - per_system.n_windows) || ' of ' || per_system.n_pairs
                || ' window pairs have no quantile forecasts: the change is over the others and not tested'
            when cluster_se.n_clusters < 2 then 'fewer than two clusters of windows: no interval'
        end as varchar) as reason,
    from per_system
    left join cluster_se
        on cluster_se.run_id = per_system.run_id
        and cluster_se.system_id = per_system.system_id
        and cluster_se.perturbation_id = per_system.perturbation_id
        and cluster_se.outcome = per_system.outcome
    left join estimates
        on estimates.run_id = per_system.run_id
        and estimates.system_id = per_system.system_id
        and estimates.perturbation_id = per_system.perturbation_id
        and estimates.outcome = per_system.outcome
)

select * from final
