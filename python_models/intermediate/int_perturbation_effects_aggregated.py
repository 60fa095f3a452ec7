"""APE and PIE raw scores: the worst case over confounder distributions (paper RQ2/RQ3),
per outcome, with their spread over treatment draws and the oracle beside.

Thin wrapper over tsrate.methods.causal.effects.effect_scores applied to int_perturbation_effects_estimated. Feeds the
ape_* / pie_* rows of robustness_scores. Tunables come from int_perturbation_effects_aggregated.yml (a pipeline step,
not a public mart).
"""

from tsrate.methods.causal.effects import effect_means, effect_scores


def model(dbt, session):
    aggregation = dbt.config.get("distribution_aggregation")
    if not aggregation:
        raise ValueError(
            "int_perturbation_effects_aggregated: set config distribution_aggregation "
            "(var distribution_aggregation)"
        )
    # the mean rows only (draw null): the per-draw rows beside them are published, not rated
    effects = effect_means(dbt.ref("int_perturbation_effects_estimated").df())
    return effect_scores(effects, str(aggregation))
