"""Rows of ``perturbation_effects`` (tsrate.methods.causal.effects.EFFECTS_COLUMNS) written
by hand, for the tests of the score a system gets from its distributions' effects
(``effect_scores``). No test here."""

from __future__ import annotations


def effect_row(distribution: str, **columns) -> dict:
    """Run 'r', system 's': treatment P1 of the set "P0 P1" on the company distribution
    ``distribution`` (favouring itself), the ATE of max_abs_residual with every stratum
    overlapping; ``columns`` give the numbers and may replace any of these."""
    return {
        "run_id": "r",
        "system_id": "s",
        "distribution_id": distribution,
        "confounder": "company",
        "favored_value": distribution,
        "perturbation_set": "P0 P1",
        "perturbation_id": "P1",
        "strata_without_overlap": 0,
        "estimand": "ATE",
        "outcome": "max_abs_residual",
    } | columns
