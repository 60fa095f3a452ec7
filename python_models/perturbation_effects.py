"""Perturbation effects per system x confounder distribution (paper eqs. 2-3, Algorithm 3).

Thin wrapper over tsrate.causal.perturbation_effects: each system's windows get the
perturbation drawn for its perturbation set (treatment_assignments); their outcome under
that perturbation is the observed data, and the system's full grid of window_errors (every
window under every perturbation) gives the oracle effect. Tunables come from
python_models/perturbation_effects.yml.
"""

import pandas as pd
from threadpoolctl import threadpool_limits

from tsrate.causal import EFFECT_COLUMNS, perturbation_effects

UNIT = ["ticker", "window_end_date"]
COLUMNS = [
    "run_id",
    "system_id",
    "distribution_id",
    "confounder",
    "favored_value",
    "perturbation_set",
    *EFFECT_COLUMNS,
    "outcome",
]

#: Column types of the table (stable even when it is empty).
TEXT = ["run_id", "system_id", "distribution_id", "confounder", "favored_value"]
TEXT += ["perturbation_set", "perturbation_id", "estimand", "outcome"]
INTEGER = ["n_treated", "n_control", "strata_without_overlap", "n_strata"]
NUMBER = ["ape_observational", "ape_matched", "ape_oracle", "matching_error", "pie_percent"]
SCHEMA = {
    **dict.fromkeys(TEXT, "string"),
    **dict.fromkeys(INTEGER, "int64"),
    **dict.fromkeys(NUMBER, "float64"),
}


def system_effects(
    window_errors: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    assignments: pd.DataFrame,
    outcome: str,
    estimand: str,
    seed: int,
) -> pd.DataFrame:
    """APE_o, APE_m, oracle APE and PIE % for every run, system, distribution and treatment."""
    frames = []
    usable = perturbation_sets.loc[perturbation_sets["has_effects"].astype(bool)]
    for row in usable.sort_values(["run_id", "system_id"]).itertuples(index=False):
        grid = window_errors.loc[
            (window_errors["run_id"] == row.run_id) & (window_errors["system_id"] == row.system_id),
            [*UNIT, "industry", "perturbation_id", outcome],
        ]
        drawn = assignments.loc[
            (assignments["run_id"] == row.run_id)
            & (assignments["perturbation_set"] == row.perturbation_set)
        ]
        observed = drawn.merge(
            grid[[*UNIT, "perturbation_id", outcome]],
            on=[*UNIT, "perturbation_id"],
            how="left",
            validate="many_to_one",
        )
        for distribution_id, units in observed.groupby("distribution_id", sort=True):
            first = units.iloc[0]
            try:
                effects = perturbation_effects(
                    units,
                    str(first["confounder"]),
                    estimand=estimand,
                    outcome=outcome,
                    full_grid=grid,
                    seed=seed,
                )
            except ValueError as err:
                raise ValueError(
                    f"run {row.run_id}, system {row.system_id!r}, distribution "
                    f"{distribution_id!r}: {err}"
                ) from err
            effects.insert(0, "perturbation_set", row.perturbation_set)
            effects.insert(0, "favored_value", str(first["favored_value"]))
            effects.insert(0, "confounder", str(first["confounder"]))
            effects.insert(0, "distribution_id", distribution_id)
            effects.insert(0, "system_id", row.system_id)
            effects.insert(0, "run_id", row.run_id)
            effects["outcome"] = outcome
            frames.append(effects)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)


def model(dbt, session):
    outcome = dbt.config.get("robustness_outcome")
    estimand = dbt.config.get("matching_estimand")
    seed = dbt.config.get("causal_seed")
    if not outcome or not estimand or seed is None:
        raise ValueError(
            "perturbation_effects: set config robustness_outcome, matching_estimand and "
            "causal_seed (vars of the same names)"
        )
    window_errors = dbt.ref("window_errors").df()
    perturbation_sets = dbt.ref("system_perturbation_sets").df()
    assignments = dbt.ref("treatment_assignments").df()
    # Hundreds of tiny logistic fits: multi-threaded BLAS only adds overhead (about 3x slower).
    with threadpool_limits(1):
        effects = system_effects(
            window_errors, perturbation_sets, assignments, outcome, str(estimand), int(seed)
        )
    return effects
