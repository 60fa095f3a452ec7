with

plan as (
    select * from {{ ref('stg_interp_suite_run_variants') }}
    where study <> 'main'
),

selected as (
    select
        suite_run_id,
        cast(json_extract(config, '$.sensitivity_models') as varchar[]) as sensitivity_models,
        cast(json_extract(config, '$.sensitivity_seeds') as integer[]) as sensitivity_seeds,
    from {{ ref('int_interp_suite_runs_selected') }}
),

runs as (
    {#- only the sensitivity models and seeds: the default point is a main-study variant
        that every model and seed also trained. Read from the suite run's units, not
        int_interp_runs_selected, which keeps a main-study variant's main seeds only -#}
    select
        units.suite_run_id,
        runs.variant_key,
        variants.dataset_id,
        variants.variant_id,
        runs.model_id,
        runs.seed,
        runs.test_mse,
    from {{ ref('stg_interp_suite_run_units') }} as units
    inner join selected on selected.suite_run_id = units.suite_run_id
    inner join {{ ref('stg_interp_runs') }} as runs on runs.run_key = units.run_key
    inner join {{ ref('stg_interp_variants') }} as variants
        on variants.variant_key = runs.variant_key
    where list_contains(selected.sensitivity_models, runs.model_id)
        and list_contains(selected.sensitivity_seeds, runs.seed)
),

points as (
    select
        plan.suite_run_id,
        plan.study,
        plan.parameter,
        plan.parameter_value,
        runs.dataset_id,
        runs.variant_id,
        runs.model_id,
        count(*) as n_runs,
        avg(runs.test_mse) as test_mse_mean,
    from plan
    inner join selected on selected.suite_run_id = plan.suite_run_id
    inner join runs
        on runs.suite_run_id = plan.suite_run_id
        and runs.variant_key = plan.variant_key
    group by all
),

relative as (
    select
        *,
        test_mse_mean / nullif(max(test_mse_mean) over (
            partition by suite_run_id, study, dataset_id, model_id
        ), 0) as relative_error,
    from points
),

final as (
    select
        cast(suite_run_id as varchar) as suite_run_id,
        cast(study as varchar) as study,
        cast(parameter as varchar) as parameter,
        cast(parameter_value as double) as parameter_value,
        cast(dataset_id as integer) as dataset_id,
        cast(variant_id as varchar) as variant_id,
        cast(model_id as varchar) as model_id,
        cast(n_runs as integer) as n_runs,
        cast(test_mse_mean as double) as test_mse_mean,
        cast(relative_error as double) as relative_error,
        {#- Fig. 15 of the paper divides the relative error by its "sigma^2_noise", which is
            the value the generators take as the noise standard deviation -#}
        cast(
            case when study = 'sensitivity_sigma' then relative_error / nullif(parameter_value, 0) end
            as double
        ) as relative_error_per_sigma,
        cast(
            case
                when study = 'sensitivity_sigma'
                    then relative_error / nullif(parameter_value * parameter_value, 0)
            end as double
        ) as relative_error_per_variance,
    from relative
)

select * from final
