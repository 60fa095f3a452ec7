"""A small effect study for the stability tests: six companies in three industries, a
system without and one with an effect of the perturbations, three perturbations, three
treatment draws; its inputs and its published APE/PIE. No test here."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.methods.causal.distributions import study_distributions
from tsrate.methods.causal.effects import effect_scores, study_effects

COMPANIES = pd.DataFrame(
    {
        "ticker": ["A", "B", "C", "D", "E", "F"],
        "industry": ["Bank", "Bank", "Pharma", "Pharma", "Tech", "Tech"],
    }
)
PERTS = ["P0", "P1", "P2"]
DRAWS = 3
SEED = 5
SETTINGS = {
    "robustness_outcome": "max_abs_residual",
    "matching_estimand": "ATE",
    "distribution_aggregation": "max",
    "causal_seed": SEED,
    "treatment_draws": DRAWS,
    "effect_strata": "confounder",
}


def effect_errors(n_dates: int = 24, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range("2003-01-01", periods=n_dates)
    frames = []
    for system, effect in (("flat", 0.0), ("moved", 0.7)):
        for p_i, pert in enumerate(PERTS):
            for j, (ticker, industry) in enumerate(COMPANIES.itertuples(index=False)):
                frames.append(
                    pd.DataFrame(
                        {
                            "run_id": "r1",
                            "system_id": system,
                            "perturbation_id": pert,
                            "ticker": ticker,
                            "industry": industry,
                            "window_end_date": dates,
                            "max_abs_residual": rng.gamma(2.0, 1.0, n_dates)
                            + effect * p_i * (1 + j % 2)
                            + 0.5 * j,
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


def effect_inputs():
    errors = effect_errors()
    sets = pd.DataFrame(
        {
            "run_id": "r1",
            "system_id": ["flat", "moved"],
            "perturbation_set": " ".join(PERTS),
            "has_effects": True,
        }
    )
    distributions = study_distributions(COMPANIES)
    dates = np.unique(errors["window_end_date"].to_numpy().astype("datetime64[D]"))
    return errors, sets, distributions, dates


def published_effects(errors, sets, distributions, draws=DRAWS) -> pd.DataFrame:
    effects = study_effects(errors, sets, distributions, SEED, draws=draws, estimand="ATE")
    return effects, effect_scores(effects, "max")
