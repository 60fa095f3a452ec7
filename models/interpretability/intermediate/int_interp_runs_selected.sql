{#- The training runs of the selected suite run, with their dataset variant. A run of a
    main-study variant counts only on a main-study seed: a sensitivity study's default
    point is that same variant, trained by the sensitivity models on the sensitivity seeds,
    and those runs belong to interp_sensitivity alone. -#}
with

selected as (
    select
        suite_run_id,
        cast(json_extract(config, '$.seeds') as integer[]) as main_seeds,
    from {{ ref('int_interp_suite_runs_selected') }}
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

main_variants as (
    select distinct suite_run_id, variant_key
    from {{ ref('stg_interp_suite_run_variants') }}
    where study = 'main'
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
    left join main_variants
        on main_variants.suite_run_id = selected.suite_run_id
        and main_variants.variant_key = runs.variant_key
    where main_variants.variant_key is null
        or selected.main_seeds is null
        or list_contains(selected.main_seeds, runs.seed)
)

select * from final
