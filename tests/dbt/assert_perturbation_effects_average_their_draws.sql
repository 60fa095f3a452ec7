{#- Every perturbation_effects row is the mean of its rows in perturbation_effect_draws (the
    numbers to floating rounding; a mean snapped to 0 within 1e-12 x scale), their count is
    n_draws and every draw lies in 0 .. var treatment_draws - 1 with counts >= 1 and
    PIE % >= 0. Rows returned = violating effect rows (or orphan draws). -#}
with

draws as (
    select
        run_id, system_id, distribution_id, perturbation_id, outcome,
        count(*) as n_draws,
        avg(ape_observational) as ape_observational,
        avg(ape_matched) as ape_matched,
        avg(ape_oracle) as ape_oracle,
        avg(pie_percent) as pie_percent,
        min(draw) as first_draw,
        max(draw) as last_draw,
        min(least(n_treated, n_control)) as least_arm,
        min(pie_percent) as least_pie,
    from {{ ref('perturbation_effect_draws') }}
    group by all
),

compared as (
    select
        e.run_id, e.system_id, e.distribution_id, e.perturbation_id, e.outcome,
        e.n_draws as published_draws,
        d.n_draws as counted_draws,
        greatest(
            abs(e.ape_observational - d.ape_observational),
            abs(e.ape_matched - d.ape_matched),
            abs(e.ape_oracle - d.ape_oracle),
            abs(e.pie_percent - d.pie_percent)
        ) as largest_gap,
        greatest(1.0, abs(e.ape_observational), abs(e.ape_matched), abs(e.pie_percent)) as scale,
        d.first_draw, d.last_draw, d.least_arm, d.least_pie,
    from {{ ref('perturbation_effects') }} as e
    full outer join draws as d
        using (run_id, system_id, distribution_id, perturbation_id, outcome)
)

select *
from compared
where published_draws is null
    or counted_draws is null
    or published_draws <> counted_draws
    or largest_gap > 1e-9 * scale
    or first_draw < 0
    or last_draw >= {{ var('treatment_draws') }}
    or least_arm < 1
    or least_pie < 0
