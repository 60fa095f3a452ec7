"""A small effect study for the stability tests: six companies in three industries, a
system without and one with an effect of the perturbations, three perturbations, three
treatment draws; its inputs and its published APE/PIE; and the window errors' generator the
stability tests share. No test here."""

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


def company_errors(
    companies: pd.DataFrame,
    systems: dict[str, float],
    outcome,
    start: str,
    n_dates: int,
    seed: int,
    run_id: str | None = None,
) -> pd.DataFrame:
    """Window errors of every system x perturbation (PERTS) x company on ``n_dates``
    business days from ``start``: ``outcome(draws, shift, perturbation index, company
    index)`` of Gamma(2, 1) draws (``seed``'s, in that loop order) and the system's shift."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(start, periods=n_dates)
    frames = []
    for system, shift in systems.items():
        for p_i, pert in enumerate(PERTS):
            for j, (ticker, industry) in enumerate(companies.itertuples(index=False)):
                columns = {} if run_id is None else {"run_id": run_id}
                columns.update(
                    system_id=system,
                    perturbation_id=pert,
                    ticker=ticker,
                    industry=industry,
                    window_end_date=dates,
                    max_abs_residual=outcome(rng.gamma(2.0, 1.0, n_dates), shift, p_i, j),
                )
                frames.append(pd.DataFrame(columns))
    return pd.concat(frames, ignore_index=True)


def error_dates(errors: pd.DataFrame) -> np.ndarray:
    """The distinct window dates of ``errors``, as days."""
    return np.unique(errors["window_end_date"].to_numpy().astype("datetime64[D]"))


def effect_errors(n_dates: int = 24, seed: int = 0) -> pd.DataFrame:
    """'flat' without an effect; 'moved' worse by 0.7 per perturbation step (twice that on
    every second company); each company 0.5 above the one before."""
    return company_errors(
        COMPANIES,
        {"flat": 0.0, "moved": 0.7},
        lambda draws, effect, p_i, j: draws + effect * p_i * (1 + j % 2) + 0.5 * j,
        "2003-01-01",
        n_dates,
        seed,
        run_id="r1",
    )


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
    return errors, sets, distributions, error_dates(errors)


def published_effects(errors, sets, distributions, draws=DRAWS) -> pd.DataFrame:
    effects = study_effects(errors, sets, distributions, SEED, draws=draws, estimand="ATE")
    return effects, effect_scores(effects, "max")
