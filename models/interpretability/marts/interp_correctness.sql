with

measured as (
    select * from {{ ref('int_interp_correctness_measured') }}
),

scores as (
    select suite_run_id, variant_id, model_id, in_main_study from {{ ref('interp_prediction_scores') }}
),

aggregated as (
    select
        suite_run_id,
        variant_id,
        model_id,
        measure,
        avg(value) as mean_value,
        stddev_samp(value) as std_value,
        avg(chance) as mean_chance,
        avg(margin) as mean_margin,
        stddev_samp(margin) as std_margin,
        count(value) as n_defined,
        count(*) as n_runs,
        min(undefined_reason) as undefined_reason,
    from measured
    group by suite_run_id, variant_id, model_id, measure
),

final as (
    select
        cast(aggregated.suite_run_id as varchar) as suite_run_id,
        cast(aggregated.variant_id as varchar) as variant_id,
        cast(aggregated.model_id as varchar) as model_id,
        cast(aggregated.measure as varchar) as measure,
        cast(aggregated.mean_value as double) as mean_value,
        cast(aggregated.std_value as double) as std_value,
        cast(aggregated.mean_chance as double) as mean_chance,
        cast(aggregated.mean_margin as double) as mean_margin,
        cast(aggregated.std_margin as double) as std_margin,
        cast(
            case when aggregated.n_defined = 0 then aggregated.undefined_reason end as varchar
        ) as undefined_reason,
        cast(aggregated.n_defined as integer) as n_defined,
        cast(aggregated.n_runs as integer) as n_runs,
        cast(scores.in_main_study as boolean) as in_main_study,
    from aggregated
    left join scores
        on scores.suite_run_id = aggregated.suite_run_id
        and scores.variant_id = aggregated.variant_id
        and scores.model_id = aggregated.model_id
)

select * from final
