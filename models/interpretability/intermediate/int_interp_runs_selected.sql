{#- The training runs of the selected suite run, with their dataset variant. -#}
with

selected as (
    select suite_run_id from {{ ref('int_interp_suite_runs_selected') }}
),

units as (
    select * from {{ ref('stg_interp_suite_run_units') }}
),

runs as (
    select * from {{ ref('stg_interp_runs') }}
),

variants as (
    select * from {{ ref('stg_interp_variants') }}
),

final as (
    select
        selected.suite_run_id,
        runs.run_key,
        runs.variant_key,
        variants.variant_id,
        variants.dataset_id,
        variants.n_series,
        runs.model_id,
        runs.seed,
        runs.config_name,
        runs.device,
        runs.train_mse,
        runs.test_mse,
        cast(json_extract(runs.settings, '$.window') as integer) as window_length,
        units.reused,
    from selected
    inner join units on units.suite_run_id = selected.suite_run_id
    inner join runs on runs.run_key = units.run_key
    inner join variants on variants.variant_key = runs.variant_key
)

select * from final
