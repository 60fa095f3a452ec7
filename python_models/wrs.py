"""Weighted Rejection Score per run x system x perturbation x analysis (paper eq. 1).

Thin wrapper over tsrate.stats.weighted_rejection_scores applied to each analysis of
wrs_pairs. Feeds the wrs_industry / wrs_company rows of robustness_scores.
"""

import pandas as pd

from tsrate.marts_io import read_columns
from tsrate.stats import WRS_COLUMNS, weighted_rejection_scores

COLUMNS = ["run_id", "analysis", "metric", *WRS_COLUMNS]
SCHEMA = {
    **dict.fromkeys(["run_id", "analysis", "metric", "system_id", "perturbation_id"], "string"),
    **dict.fromkeys(["raw_score", "max_score"], "float64"),
    "n_pairs": "int64",
}
#: The columns of wrs_pairs the score needs.
PAIR_INPUT = ["run_id", "analysis", "system_id", "perturbation_id", "confidence", "weight"]
PAIR_INPUT += ["weighted_rejection"]


def wrs(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per run, analysis, system and perturbation with the summed score."""
    frames = []
    for (run_id, analysis), block in pairs.groupby(
        ["run_id", "analysis"], sort=True, observed=True
    ):
        scores = weighted_rejection_scores(block)
        scores.insert(0, "metric", f"wrs_{analysis}")
        scores.insert(0, "analysis", analysis)
        scores.insert(0, "run_id", run_id)
        frames.append(scores)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)


def model(dbt, session):
    return wrs(read_columns(dbt.ref("wrs_pairs"), PAIR_INPUT))
