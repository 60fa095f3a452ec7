"""Perturbation effects per system x confounder distribution x outcome (paper eqs. 2-3,
Algorithm 3), and every treatment draw they average.

Thin wrapper over tsrate.methods.causal.effects.study_effects: the confounded treatment draw is repeated
var treatment_draws times (draw 0 = treatment_assignments), APE_o / APE_m / PIE % are
estimated per draw for every outcome of var robustness_outcomes and published as mean and
spread beside the oracle effect. One run yields both grains (tsrate.methods.causal.effects.with_draws):
the mean rows (draw null; the public mart perturbation_effects) and the per-draw rows they
average (draw = r; the public mart perturbation_effect_draws), so the published draws are the
very numbers averaged. Tunables come from int_perturbation_effects_estimated.yml.
"""

from tsrate.methods.causal.effects import study_effects, with_draws
from tsrate.platform.marts_io import read_columns


def model(dbt, session):
    # dbt registers config keys from plain dbt.config.get("...") calls only
    configured = dbt.config.get("robustness_outcomes")
    outcomes = str(configured or "").split()
    estimand = dbt.config.get("matching_estimand")
    seed = dbt.config.get("causal_seed")
    draws = dbt.config.get("treatment_draws")
    strata = dbt.config.get("effect_strata")
    if not outcomes or not estimand or seed is None or draws is None or not strata:
        raise ValueError(
            "int_perturbation_effects_estimated: set config robustness_outcomes, matching_estimand, "
            "causal_seed, treatment_draws and effect_strata (vars of the same names)"
        )
    columns = ["run_id", "system_id", "ticker", "industry", "window_end_date", "perturbation_id"]
    draw_rows = []
    effects = study_effects(
        read_columns(dbt.ref("window_errors"), [*columns, *outcomes]),
        dbt.ref("int_perturbation_sets_derived").df(),
        dbt.ref("int_confounder_distributions").df(),
        int(seed),
        draws=int(draws),
        estimand=str(estimand),
        outcomes=outcomes,
        strata=str(strata),
        draw_rows=draw_rows,
    )
    return with_draws(effects, draw_rows)
