"""How stable the ratings are: a circular block bootstrap over window dates.

Thin wrapper over tsrate.robustness.marts.stability.rating_stability (see there for the method):
the robustness ratings of every outcome of var robustness_outcomes (an ``outcome`` column),
the accuracy ratings once (outcome null). Tunables come from int_ratings_bootstrapped.yml; the
public mart rating_stability selects from it.
"""

from tsrate.platform.marts_io import read_columns
from tsrate.robustness.marts.stability import (
    ACCURACY_METRICS,
    SETTINGS,
    rating_stability,
    resampled_outcomes,
)


def model(dbt, session):
    # dbt reads config keys from literal dbt.config.get("...") calls: one call per key.
    settings = {
        "rating_levels": dbt.config.get("rating_levels"),
        "bootstrap_resamples": dbt.config.get("bootstrap_resamples"),
        "bootstrap_block_length": dbt.config.get("bootstrap_block_length"),
        "bootstrap_seed": dbt.config.get("bootstrap_seed"),
        "bootstrap_confidence": dbt.config.get("bootstrap_confidence"),
        "robustness_outcome": dbt.config.get("robustness_outcome"),
        "robustness_outcomes": dbt.config.get("robustness_outcomes"),
        "matching_estimand": dbt.config.get("matching_estimand"),
        "distribution_aggregation": dbt.config.get("distribution_aggregation"),
        "bootstrap_effect_distributions": dbt.config.get("bootstrap_effect_distributions"),
        "causal_seed": dbt.config.get("causal_seed"),
        "treatment_draws": dbt.config.get("treatment_draws"),
        "effect_strata": dbt.config.get("effect_strata"),
    }
    unset = sorted(key for key in SETTINGS if settings.get(key) in (None, ""))
    if unset:
        raise ValueError(f"int_ratings_bootstrapped: set config {unset} (vars of the same names)")
    outcomes = resampled_outcomes(settings)
    columns = ["run_id", "system_id", "perturbation_id", "ticker", "industry"]
    columns += ["window_end_date", *ACCURACY_METRICS]
    columns += [outcome for outcome in outcomes if outcome not in columns]
    listed = ", ".join("'" + outcome.replace("'", "''") + "'" for outcome in outcomes)
    return rating_stability(
        read_columns(dbt.ref("window_errors"), columns),
        dbt.ref("robustness_scores").filter(f"outcome in ({listed})").df(),
        # the published means only (draw null), not the per-draw rows beside them
        dbt.ref("int_perturbation_effects_estimated")
        .filter(f"outcome in ({listed}) and draw is null")
        .select(
            "run_id, system_id, outcome, distribution_id, confounder, perturbation_id, "
            "ape_matched, pie_percent"
        )
        .df(),
        dbt.ref("confidence_levels").df(),
        dbt.ref("int_perturbation_sets_derived").df(),
        dbt.ref("int_confounder_distributions").df(),
        settings,
        accuracy_scores=dbt.ref("accuracy_scores")
        .select("run_id, system_id, perturbation_id, metric, mean")
        .df(),
    )
