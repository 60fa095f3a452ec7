with

cells as (
    select * from {{ ref('interp_attention_summary') }}
    -- DA-RNN's input attention never covers the target itself: its beta diagonal is 0 on
    -- every seed by construction (std 0), not attention, and left out as in correctness
    where not (
        model_id = 'darnn' and attention = 'beta'
        and coalesce(target_index = source_index, false)
    )
),

scores as (
    select suite_run_id, variant_id, model_id, in_main_study from {{ ref('interp_prediction_scores') }}
),

aggregated as (
    select
        suite_run_id,
        variant_id,
        model_id,
        attention,
        avg(std_value) as mean_std,
        max(std_value) as max_std,
        avg(mean_value) as mean_value,
        max(n_runs) as n_runs,
        count(*) as n_cells,
    from cells
    group by suite_run_id, variant_id, model_id, attention
),

final as (
    select
        cast(aggregated.suite_run_id as varchar) as suite_run_id,
        cast(aggregated.variant_id as varchar) as variant_id,
        cast(aggregated.model_id as varchar) as model_id,
        cast(aggregated.attention as varchar) as attention,
        cast(aggregated.mean_std as double) as mean_std,
        cast(aggregated.max_std as double) as max_std,
        cast(aggregated.mean_value as double) as mean_value,
        cast(aggregated.n_runs as integer) as n_runs,
        cast(aggregated.n_cells as integer) as n_cells,
        cast(scores.in_main_study as boolean) as in_main_study,
    from aggregated
    left join scores
        on scores.suite_run_id = aggregated.suite_run_id
        and scores.variant_id = aggregated.variant_id
        and scores.model_id = aggregated.model_id
)

select * from final
