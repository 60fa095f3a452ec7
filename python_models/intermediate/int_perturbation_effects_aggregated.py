"""APE and PIE raw scores: the worst case over confounder distributions (paper RQ2/RQ3),
per outcome, with their spread over treatment draws and the oracle beside.

Thin wrapper over tsrate.methods.causal.effects.effect_scores applied to int_perturbation_effects_estimated. Feeds the
ape_* / pie_* rows of robustness_scores. Tunables come from int_perturbation_effects_aggregated.yml (a pipeline step,
not a public mart).
"""

from tsrate.methods.causal.effects import effect_scores


def model(dbt, session):
    aggregation = dbt.config.get("distribution_aggregation")
    if not aggregation:
        raise ValueError(
            "int_perturbation_effects_aggregated: set config distribution_aggregation "
            "(var distribution_aggregation)"
        )
    return effect_scores(dbt.ref("int_perturbation_effects_estimated").df(), str(aggregation))
