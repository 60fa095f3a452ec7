"""Pure functions behind the suite's dbt Python models (python_models/interp_*.py).

``correctness_table``: per training run, every correctness measure of :mod:`.measures`
(one row per run and measure; NaN where a measure is undefined). DA-RNN's beta diagonal is
set to NaN first (its input attention never covers the target itself, paper Section 4.2),
and its alpha (over encoder states, source -1) has no per-series lag measure.

``rating_table``: the suite's ratings per (suite run, metric, dataset variant) with the
kit's :func:`tsrate.suites.rating.rate_scores` and the suite's rows of
``seeds/suite_rating_specs.csv`` (metrics: test_mse, test_mse_cv, beta_spearman,
beta_auroc, beta_std); the model is the rated system.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.suites.interpretability.measures import correctness
from tsrate.suites.rating import rate_scores

CORRECTNESS_COLUMNS = [
    "suite_run_id",
    "run_key",
    "variant_id",
    "model_id",
    "seed",
    "measure",
    "value",
]


def _matrices(frame: pd.DataFrame, n: int, window: int, kind: str):
    part = frame[frame["attention"] == kind]
    if part.empty:
        return None
    if kind == "alpha":
        part = part[part["source_index"] >= 0]
        if part.empty:
            return None
        out = np.zeros((n, n, window))
        out[part["target_index"], part["source_index"], part["lag"].astype(int) - 1] = part["value"]
        return out
    out = np.zeros((n, n))
    out[part["target_index"], part["source_index"]] = part["value"]
    return out


def correctness_table(
    runs: pd.DataFrame, attention: pd.DataFrame, truth: pd.DataFrame
) -> pd.DataFrame:
    """One row per (run, measure). ``runs``: int_interp_runs_selected; ``attention``:
    int_interp_attention_selected; ``truth``: stg_interp_truth."""
    records = []
    by_run = dict(tuple(attention.groupby("run_key"))) if len(attention) else {}
    by_variant = dict(tuple(truth.groupby("variant_key"))) if len(truth) else {}
    for run in runs.itertuples(index=False):
        n, window = int(run.n_series), int(run.window_length)
        frame = by_run.get(run.run_key)
        if frame is None:
            continue
        edges = by_variant.get(run.variant_key, truth.iloc[0:0])
        matrix = np.zeros((n, n))
        lags = np.zeros((n, n, window))
        for edge in edges.itertuples(index=False):
            matrix[edge.target_index, edge.source_index] += edge.weight
            if 1 <= edge.lag <= window:
                lags[edge.target_index, edge.source_index, edge.lag - 1] += edge.weight
        beta = _matrices(frame, n, window, "beta")
        if beta is None:
            continue
        if run.model_id == "darnn":
            beta = beta.copy()
            np.fill_diagonal(beta, np.nan)
        alpha = _matrices(frame, n, window, "alpha")
        picks = _matrices(frame, n, window, "tcdf_picks")
        for measure, value in correctness(beta, alpha, picks, matrix, lags).items():
            records.append(
                {
                    "suite_run_id": run.suite_run_id,
                    "run_key": run.run_key,
                    "variant_id": run.variant_id,
                    "model_id": run.model_id,
                    "seed": int(run.seed),
                    "measure": measure,
                    "value": value,
                }
            )
    out = pd.DataFrame.from_records(records, columns=CORRECTNESS_COLUMNS)
    return out.astype({"seed": "int64", "value": "float64"})


def rating_scores(
    prediction: pd.DataFrame, correctness: pd.DataFrame, stability: pd.DataFrame
) -> pd.DataFrame:
    """The long score table the suite rates (suite_run_id, variant_id, model_id, metric,
    raw_score) over the main study only: test_mse (mean) and test_mse_cv from
    interp_prediction_scores, beta_spearman and beta_auroc (mean over seeds) from
    interp_correctness, beta_std (mean std of beta) from interp_stability."""

    def main(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["in_main_study"].fillna(False).astype(bool)]

    prediction, correctness, stability = main(prediction), main(correctness), main(stability)
    keys = ["suite_run_id", "variant_id", "model_id"]
    beta = correctness[correctness["measure"].isin(["beta_spearman", "beta_auroc"])]
    beta_std = stability[stability["attention"] == "beta"]
    return pd.concat(
        [
            prediction[keys].assign(metric="test_mse", raw_score=prediction["test_mse_mean"]),
            prediction[keys].assign(metric="test_mse_cv", raw_score=prediction["test_mse_cv"]),
            beta[keys].assign(metric=beta["measure"], raw_score=beta["mean_value"]),
            beta_std[keys].assign(metric="beta_std", raw_score=beta_std["mean_std"]),
        ],
        ignore_index=True,
    )


def rating_table(
    scores: pd.DataFrame, levels: int, specs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Ratings per (suite run, metric, variant). ``scores``: suite_run_id, metric,
    variant_id, model_id, raw_score (undefined scores are left out); ``specs``: the rating
    specs (default: the seed file)."""
    return rate_scores(
        scores,
        "interpretability",
        ["suite_run_id", "metric", "variant_id"],
        "model_id",
        levels,
        specs,
    )
