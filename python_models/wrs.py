"""Weighted Rejection Score per run x system x perturbation x analysis (paper eq. 1).

Thin wrapper over tsrate.stats.weighted_rejection_scores applied to each analysis of
wrs_pairs. Feeds the wrs_industry / wrs_company rows of robustness_scores.
"""

import pandas as pd

from tsrate.stats import WRS_COLUMNS, weighted_rejection_scores

COLUMNS = ["run_id", "analysis", "metric", *WRS_COLUMNS]
SCHEMA = {
    **dict.fromkeys(["run_id", "analysis", "metric", "system_id", "perturbation_id"], "string"),
    **dict.fromkeys(["raw_score", "max_score"], "float64"),
    "n_pairs": "int64",
}


def wrs(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per run, analysis, system and perturbation with the summed score."""
    frames = []
    for (run_id, analysis), block in pairs.groupby(["run_id", "analysis"], sort=True):
        scores = weighted_rejection_scores(block)
        scores.insert(0, "metric", f"wrs_{analysis}")
        scores.insert(0, "analysis", analysis)
        scores.insert(0, "run_id", run_id)
        frames.append(scores)
    if not frames:
        return pd.DataFrame(columns=COLUMNS).astype(SCHEMA)
    return pd.concat(frames, ignore_index=True)[COLUMNS].astype(SCHEMA)


def model(dbt, session):
    return wrs(dbt.ref("wrs_pairs").df())
