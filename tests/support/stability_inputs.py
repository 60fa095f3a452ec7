"""Inputs of the robustness rating_stability computation (tsrate.robustness.marts.stability)
that its unit tests share: its settings and the empty score and effect tables of a study
rated on accuracy alone. No test here."""

from __future__ import annotations

import pandas as pd


def stability_settings(**changed) -> dict:
    """The rating_stability settings these tests use: 5 resamples, seed 1, 90 %, one draw;
    ``changed`` replaces any of them."""
    return (
        dict(
            rating_levels=3,
            bootstrap_resamples=5,
            bootstrap_block_length=3,
            bootstrap_seed=1,
            bootstrap_confidence=0.9,
            robustness_outcome="max_abs_residual",
            matching_estimand="ATE",
            distribution_aggregation="max",
            bootstrap_effect_distributions=0,
            causal_seed=0,
            treatment_draws=1,
            effect_strata="confounder",
        )
        | changed
    )


def empty_scores() -> pd.DataFrame:
    """No published robustness scores (a new, empty table each call)."""
    return pd.DataFrame(
        columns=["run_id", "metric", "outcome", "system_id", "perturbation_id", "raw_score"]
        + ["max_score"]
    )


def accuracy_scores_of(errors: pd.DataFrame) -> pd.DataFrame:
    """accuracy_scores as the mart computes them from ``errors``: the mean of each accuracy
    metric per run, system and perturbation over every window, a NaN making it NaN as in
    SQL's avg (the frames of these tests hold NaN, not null: SQL's avg skips a null)."""
    keys = ["run_id", "system_id", "perturbation_id"]
    long = errors.melt(keys, ["smape", "mase", "sign_accuracy"], "metric", "value")
    return (
        long.groupby([*keys, "metric"], as_index=False)["value"]
        .agg(lambda v: v.mean(skipna=False))
        .rename(columns={"value": "mean"})
    )


def empty_effects() -> pd.DataFrame:
    """No matched effects (a new, empty table each call)."""
    return pd.DataFrame(
        columns=["run_id", "system_id", "outcome", "distribution_id", "confounder"]
        + ["perturbation_id", "ape_matched", "pie_percent"]
    )


def accuracy_study_stability(
    errors: pd.DataFrame,
    scores: pd.DataFrame,
    effects: pd.DataFrame,
    sets: pd.DataFrame,
    settings: dict,
) -> pd.DataFrame:
    """rating_stability of a study without confounder distributions, at the sweep's
    confidence levels, with accuracy_scores published from ``errors``
    (:func:`accuracy_scores_of`)."""
    from tests.support.sweep_stability import LEVELS
    from tsrate.methods.causal.distributions import DISTRIBUTION_COLUMNS
    from tsrate.robustness.marts.stability import rating_stability

    return rating_stability(
        errors,
        scores,
        effects,
        LEVELS,
        sets,
        pd.DataFrame(columns=DISTRIBUTION_COLUMNS),
        settings,
        accuracy_scores=accuracy_scores_of(errors),
    )
