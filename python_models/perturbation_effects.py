"""Perturbation effects per system x confounder distribution (paper eqs. 2-3, Algorithm 3).

Thin wrapper over tsrate.causal.grid_perturbation_effects (perturbation_effects for many
distributions at once): each system's windows get the perturbation drawn for its
perturbation set (treatment_assignments); their outcome under that perturbation is the
observed data, and the system's full grid of window_errors (every window under every
perturbation) gives the oracle effect. Tunables come from python_models/perturbation_effects.yml.

Scale: treatment_assignments holds distributions x perturbation sets x windows rows, so it is
streamed one perturbation set at a time into a (distributions x windows) matrix of small
perturbation codes; window_errors is read with only the columns needed, strings as
categoricals.
"""

import pandas as pd

from tsrate.causal import CONTROL, EFFECT_COLUMNS, confounder_column, grid_perturbation_effects
from tsrate.marts_io import Units, assignment_matrix, outcome_grid, read_columns

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
    assignments,
    outcome: str,
    estimand: str,
    seed: int,
) -> pd.DataFrame:
    """APE_o, APE_m, oracle APE and PIE % for every run, system, distribution and treatment.

    ``window_errors``: run_id, system_id, ticker, industry, window_end_date, perturbation_id
    and ``outcome``; ``assignments``: the treatment_assignments relation (DuckDB). ``seed``
    is kept for the logistic option of tsrate.causal; the closed form is deterministic.
    """
    frames = []
    usable = perturbation_sets.loc[perturbation_sets["has_effects"].astype(bool)]
    for run_id, run_sets in usable.groupby("run_id", sort=True):
        errors = window_errors.loc[window_errors["run_id"] == run_id]
        units = Units(errors)
        for perturbation_set, systems in run_sets.groupby("perturbation_set", sort=True):
            labels = sorted(str(perturbation_set).split())
            meta, matrix = assignment_matrix(
                assignments, str(run_id), str(perturbation_set), units, labels
            )
            if meta.empty:
                continue
            strata = []
            for confounder in meta["confounder"]:
                column = confounder_column(str(confounder))
                if column not in units.strata:
                    raise ValueError(f"run {run_id}: unknown confounder {confounder!r}")
                strata.append(units.strata[column])
            for system_id in sorted(systems["system_id"]):
                grid = outcome_grid(
                    errors.loc[errors["system_id"] == system_id],
                    units,
                    labels,
                    outcome,
                    system_id,
                )
                try:
                    effects = grid_perturbation_effects(
                        grid, labels, matrix, strata, CONTROL, estimand, outcome=outcome
                    )
                except ValueError as err:
                    raise ValueError(f"run {run_id}, system {system_id!r}: {err}") from err
                draw = effects.pop("draw").to_numpy()
                for column in ("favored_value", "confounder", "distribution_id"):
                    effects.insert(0, column, meta[column].astype(str).to_numpy()[draw])
                effects.insert(0, "system_id", system_id)
                effects.insert(0, "run_id", run_id)
                effects.insert(5, "perturbation_set", perturbation_set)
                effects["outcome"] = outcome
                frames.append(effects)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    out = pd.concat(frames, ignore_index=True)[COLUMNS]
    out = out.sort_values(["run_id", "system_id", "distribution_id"], kind="stable")
    return out.reset_index(drop=True).astype(SCHEMA)


def model(dbt, session):
    outcome = dbt.config.get("robustness_outcome")
    estimand = dbt.config.get("matching_estimand")
    seed = dbt.config.get("causal_seed")
    if not outcome or not estimand or seed is None:
        raise ValueError(
            "perturbation_effects: set config robustness_outcome, matching_estimand and "
            "causal_seed (vars of the same names)"
        )
    columns = ["run_id", "system_id", "ticker", "industry", "window_end_date", "perturbation_id"]
    window_errors = read_columns(dbt.ref("window_errors"), [*columns, outcome])
    perturbation_sets = dbt.ref("system_perturbation_sets").df()
    return system_effects(
        window_errors,
        perturbation_sets,
        dbt.ref("treatment_assignments"),
        outcome,
        str(estimand),
        int(seed),
    )
