"""Confounded treatment assignment (paper section 4.2, RQ2/RQ3; DESIGN.md method decisions).

Thin wrapper over tsrate.causal.assign_treatments: for every confounder distribution of the
seed and every perturbation set of system_perturbation_sets, each window (ticker x
window_end_date of window_errors) draws one perturbation. Tunables come from
python_models/treatment_assignments.yml.
"""

import pandas as pd

from tsrate.causal import ASSIGNMENT_COLUMNS, assign_treatments

COLUMNS = ["run_id", "perturbation_set", *ASSIGNMENT_COLUMNS]
#: Column types (window_end_date holds datetime.date values, stored as DATE).
TEXT = ["run_id", "perturbation_set", "distribution_id", "confounder", "favored_value"]
TEXT += ["ticker", "industry", "perturbation_id"]
SCHEMA = {**dict.fromkeys(TEXT, "string"), "is_favored": "bool"}


def treatment_assignments(
    window_errors: pd.DataFrame,
    perturbation_sets: pd.DataFrame,
    distributions: pd.DataFrame,
    seed: int,
) -> pd.DataFrame:
    """One draw per (run, distribution, perturbation set, ticker, window).

    Distributions whose favoured value matches no window of the run are dropped
    (``missing_favored="drop"``): the seed lists more companies than a study uses.
    """
    frames = []
    usable = perturbation_sets.loc[perturbation_sets["has_effects"].astype(bool)]
    for run_id, sets in usable.groupby("run_id", sort=True):
        errors = window_errors.loc[window_errors["run_id"] == run_id]
        units = errors[["ticker", "industry", "window_end_date"]].drop_duplicates()
        for perturbation_set in sorted(sets["perturbation_set"].unique()):
            drawn = assign_treatments(
                units,
                distributions,
                perturbation_set.split(),
                seed,
                missing_favored="drop",
            )
            drawn.insert(0, "perturbation_set", perturbation_set)
            drawn.insert(0, "run_id", run_id)
            frames.append(drawn)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype({**SCHEMA, "window_end_date": "datetime64[s]"})
    out = pd.concat(frames, ignore_index=True)[COLUMNS]
    out["favored_value"] = out["favored_value"].astype(str)
    out["window_end_date"] = pd.to_datetime(out["window_end_date"]).dt.date  # stored as DATE
    return out.astype(SCHEMA)


def model(dbt, session):
    seed = dbt.config.get("causal_seed")
    if seed is None:
        raise ValueError("treatment_assignments: set config causal_seed (var causal_seed)")
    return treatment_assignments(
        dbt.ref("window_errors").df(),
        dbt.ref("system_perturbation_sets").df(),
        dbt.ref("confounder_distributions").df(),
        int(seed),
    )
