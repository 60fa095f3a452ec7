"""Pure functions behind the suite's dbt Python models (python_models/rsn_*.py).

``forecast_errors``: per parsed forecast, MAE and MSE on normalised values, beside the
"predict median" baseline on the same item (paper Section 6). Normalisation (ours; the
paper normalises each series): z-score with the mean and the population standard deviation
(ddof 0) of the history the forecaster saw, applied to forecast and truth alike; a constant
history uses scale 1. So an error of 1 is one standard deviation of the history.

``rating_table``: the suite's ratings with :func:`tsrate.ratings.ratings_frame`; the task
(or forecasting condition) takes the perturbation's slot, the system the system's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.ratings import ratings_frame

FORECAST_COLUMNS = [
    "suite_run_id",
    "prompt_hash",
    "item_id",
    "system_id",
    "condition",
    "category",
    "mae",
    "mse",
    "baseline_mae",
    "baseline_mse",
]

#: Rated metrics and whether a higher raw score is better.
RATED_METRICS: dict[str, bool] = {
    "accuracy": True,  # choice tasks, with the series; unparseable = wrong
    "series_gap": True,  # accuracy with minus without the series (qa tasks)
    "mae": False,  # normalised forecast MAE, per forecasting condition
    "mse": False,
    "context_gain": True,  # MAE without minus MAE with context, paired items
}

RATING_COLUMNS = [
    "suite_run_id",
    "metric",
    "task",
    "system_id",
    "raw_score",
    "rating",
    "rating_levels",
    "higher_is_better",
    "rank",
]


def normalised_errors(history, future, forecast) -> tuple[float, float]:
    """(MAE, MSE) of ``forecast`` against ``future`` after z-scoring both with the
    history's mean and standard deviation (see the module docstring)."""
    history = np.asarray(history, dtype=float)  # the mean shift cancels in the error
    scale = float(history.std())
    scale = scale if scale > 0 else 1.0
    error = (np.asarray(forecast, dtype=float) - np.asarray(future, dtype=float)) / scale
    return float(np.mean(np.abs(error))), float(np.mean(error**2))


def forecast_errors(responses: pd.DataFrame) -> pd.DataFrame:
    """One row per parsed forecast. ``responses``: int_rsn_responses_scored rows (any task;
    forecasts that parsed are used)."""
    records = []
    part = responses[(responses["task"] == "forecast") & responses["parse_ok"].astype(bool)]
    for row in part.itertuples(index=False):
        history = np.asarray(row.series, dtype=float)
        future = np.asarray(row.future, dtype=float)
        forecast = np.asarray(row.forecast, dtype=float)
        if forecast.shape != future.shape:
            raise ValueError(
                f"prompt {row.prompt_hash}: forecast has {forecast.size} values, the future {future.size}"
            )
        mae, mse = normalised_errors(history, future, forecast)
        baseline = np.full(future.shape, float(np.median(history)))
        baseline_mae, baseline_mse = normalised_errors(history, future, baseline)
        records.append(
            {
                "suite_run_id": row.suite_run_id,
                "prompt_hash": row.prompt_hash,
                "item_id": row.item_id,
                "system_id": row.system_id,
                "condition": row.condition,
                "category": row.category,
                "mae": mae,
                "mse": mse,
                "baseline_mae": baseline_mae,
                "baseline_mse": baseline_mse,
            }
        )
    out = pd.DataFrame.from_records(records, columns=FORECAST_COLUMNS)
    return out.astype({c: "float64" for c in FORECAST_COLUMNS[6:]})


def rating_table(scores: pd.DataFrame, levels: int) -> pd.DataFrame:
    """Ratings per (suite run, metric, task). ``scores``: suite_run_id, metric, task,
    system_id, raw_score (undefined scores are left out)."""
    frame = scores.copy()
    frame["raw_score"] = frame["raw_score"].astype(float)
    frame = frame[np.isfinite(frame["raw_score"].to_numpy())]
    unknown = sorted(set(frame["metric"]) - set(RATED_METRICS))
    if unknown:
        raise ValueError(f"no rating direction for metrics {unknown}")
    parts = []
    for suite_run_id, block in frame.groupby("suite_run_id", sort=True):
        rated = ratings_frame(
            block.rename(columns={"task": "perturbation_id"}), levels, RATED_METRICS
        )
        rated = rated.rename(columns={"perturbation_id": "task"})
        rated.insert(0, "suite_run_id", suite_run_id)
        parts.append(rated)
    if not parts:
        return pd.DataFrame(columns=RATING_COLUMNS).astype(
            {
                "raw_score": "float64",
                "rating": "int64",
                "rating_levels": "int64",
                "higher_is_better": "bool",
                "rank": "int64",
            }
        )
    return pd.concat(parts, ignore_index=True)[RATING_COLUMNS]
