"""Pairwise Student t-tests behind the Weighted Rejection Score (paper Algorithm 1).

Thin wrapper: reads window_errors (only the columns needed, strings as categoricals) and
the confidence_levels seed, calls
tsrate.stats.weighted_rejection_pairs twice (industry pairs; company pairs inside an
industry) and stacks the results. Tunables come from python_models/wrs_pairs.yml.
"""

import pandas as pd

from tsrate.marts_io import read_columns
from tsrate.stats import PAIR_COLUMNS, WRS_ANALYSES, weighted_rejection_pairs

#: Column types of the table (stable even when a column is all null or the table is empty).
TEXT = ["run_id", "analysis", "system_id", "perturbation_id", "within_group", "group_a", "group_b"]
INTEGER = ["n_a", "n_b", "dof"]
NUMBER = ["mean_a", "mean_b", "t_statistic", "p_value", "confidence", "weight", "alpha"]
NUMBER += ["t_critical", "weighted_rejection"]
SCHEMA = {
    **dict.fromkeys(TEXT, "string"),
    **dict.fromkeys(INTEGER, "int64"),
    **dict.fromkeys(NUMBER, "float64"),
    "rejected": "bool",
}
ANALYSES = WRS_ANALYSES


def wrs_pairs(
    window_errors: pd.DataFrame, confidence_levels: pd.DataFrame, outcome: str
) -> pd.DataFrame:
    """Both WRS analyses of every run, stacked, with ``run_id`` and ``analysis`` in front."""
    frames = []
    for run_id, errors in window_errors.groupby("run_id", sort=True, observed=True):
        for analysis, (group_column, within_column) in ANALYSES.items():
            pairs = weighted_rejection_pairs(
                errors, group_column, confidence_levels, within_column, outcome
            )
            pairs.insert(0, "analysis", analysis)
            pairs.insert(0, "run_id", run_id)
            frames.append(pairs)
    columns = ["run_id", "analysis", *PAIR_COLUMNS]
    if not frames:
        return pd.DataFrame(columns=columns).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[columns].astype(SCHEMA)


def model(dbt, session):
    outcome = dbt.config.get("robustness_outcome")
    if not outcome:
        raise ValueError("wrs_pairs: set config robustness_outcome (var robustness_outcome)")
    columns = ["run_id", "system_id", "perturbation_id", "ticker", "industry", outcome]
    window_errors = read_columns(dbt.ref("window_errors"), columns)
    confidence_levels = dbt.ref("confidence_levels").df()
    return wrs_pairs(window_errors, confidence_levels, outcome)
