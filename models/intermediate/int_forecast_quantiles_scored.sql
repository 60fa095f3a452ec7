{{ config(materialized='table') }}
{#- One row per forecast step that has quantile forecasts, with its clean actual and the
    per-step terms of the probabilistic metrics (conventions in docs/probabilistic.md):
    quantile_loss_sum = sum over the 9 levels q of the pinball loss
    |(q_hat - actual) * (1{actual <= q_hat} - q)|, as fev and utilsforecast write it;
    interval_score_80 = (q90 - q10) + (2 / 0.2) * (q10 - actual)+ + (2 / 0.2) * (actual - q90)+,
    the interval score of the central 80 % interval (alpha = 0.2); is_covered_80 = q10 <= actual
    <= q90, an actual within 1e-12 (relative) of an end counting as inside, so a tie stays one
    in any price unit. -#}
{%- set levels = [10, 20, 30, 40, 50, 60, 70, 80, 90] %}
with

steps as (
    select * from {{ ref('int_forecasts_scored') }}
),

quantiles as (
    select * from {{ ref('stg_forecast_quantiles') }}
),

joined as (
    select
        steps.run_id,
        steps.system_id,
        steps.ticker,
        steps.window_end_date,
        steps.perturbation_id,
        steps.horizon_step,
        steps.actual,
        steps.mase_scale,
        {%- for level in levels %}
        quantiles.q{{ level }},
        {%- endfor %}
    from steps
    inner join quantiles
        on quantiles.partition_key = steps.partition_key
        and quantiles.window_end_date = steps.window_end_date
        and quantiles.horizon_step = steps.horizon_step
),

final as (
    select
        *,
        (
            {%- for level in levels %}
            abs((q{{ level }} - actual) * ((actual <= q{{ level }})::double - {{ level / 100 }}))
            {%- if not loop.last %} +{% endif %}
            {%- endfor %}
        ) as quantile_loss_sum,
        (q90 - q10)
            + (2.0 / 0.2) * greatest(q10 - actual, 0.0)
            + (2.0 / 0.2) * greatest(actual - q90, 0.0) as interval_score_80,
        -- inside up to floating rounding (1e-12 relative): an actual equal to an end is
        -- covered in any price unit
        actual >= q10 - 1e-12 * greatest(abs(actual), abs(q10))
            and actual <= q90 + 1e-12 * greatest(abs(actual), abs(q90)) as is_covered_80,
    from joined
)

select * from final
