with

runs as (
    select * from {{ ref('int_interp_runs_selected') }}
),

plan as (
    select * from {{ ref('stg_interp_suite_run_variants') }}
),

main_variants as (
    select distinct suite_run_id, variant_key from plan where study = 'main'
),

aggregated as (
    select
        runs.suite_run_id,
        runs.variant_id,
        any_value(runs.dataset_id) as dataset_id,
        any_value(runs.n_series) as n_series,
        runs.model_id,
        count(*) as n_runs,
        avg(runs.test_mse) as test_mse_mean,
        stddev_samp(runs.test_mse) as test_mse_std,
        avg(runs.train_mse) as train_mse_mean,
        stddev_samp(runs.train_mse) as train_mse_std,
        bool_or(main_variants.variant_key is not null) as in_main_study,
    from runs
    left join main_variants
        on main_variants.suite_run_id = runs.suite_run_id
        and main_variants.variant_key = runs.variant_key
    group by runs.suite_run_id, runs.variant_id, runs.model_id
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(variant_id as varchar) as variant_id,
        cast(dataset_id as integer) as dataset_id,
        cast(n_series as integer) as n_series,
        cast(model_id as varchar) as model_id,
        cast(n_runs as integer) as n_runs,
        cast(test_mse_mean as double) as test_mse_mean,
        cast(test_mse_std as double) as test_mse_std,
        cast(case when test_mse_mean > 0 then test_mse_std / test_mse_mean end as double) as test_mse_cv,
        cast(train_mse_mean as double) as train_mse_mean,
        cast(train_mse_std as double) as train_mse_std,
        cast(in_main_study as boolean) as in_main_study,
    from aggregated
)

select * from final
