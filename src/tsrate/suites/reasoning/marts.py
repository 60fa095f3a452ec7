"""Pure functions behind the suite's dbt Python models (python_models/rsn_*.py).

``forecast_errors``: per parsed forecast, MAE and MSE on normalised values, beside the
"predict median" baseline on the same item (paper Section 6). Normalisation (ours; the
paper normalises each series): z-score with the mean and the population standard deviation
(ddof 0) of the history the forecaster saw, applied to forecast and truth alike; a constant
history uses scale 1. So an error of 1 is one standard deviation of the history.

``rating_table``: the suite's ratings per (suite run, metric, task) with the kit's
:func:`tsrate.suites.rating.rate_scores` and the suite's rows of ``seeds/suite_rating_specs.csv``
(metrics: accuracy, series_gap, mae, mse, context_gain).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.suites.rating import rate_scores

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


def rating_scores(
    accuracy: pd.DataFrame, errors: pd.DataFrame, context: pd.DataFrame
) -> pd.DataFrame:
    """The long score table the suite rates (suite_run_id, system_id, metric, task,
    raw_score), from the marts rsn_task_accuracy (accuracy per choice task; series_gap per
    qa task), rsn_forecast_errors (mae, mse per forecasting condition, task
    ``forecast_<condition>``) and rsn_context_effects (context_gain, task ``forecast``)."""
    keys = ["suite_run_id", "system_id"]
    qa = accuracy[accuracy["task"].isin(["qa_single", "qa_two"])]
    return pd.concat(
        [
            accuracy[keys].assign(
                metric="accuracy", task=accuracy["task"], raw_score=accuracy["accuracy"]
            ),
            qa[keys].assign(metric="series_gap", task=qa["task"], raw_score=qa["series_gap"]),
            errors[keys].assign(
                metric="mae", task="forecast_" + errors["condition"], raw_score=errors["mae"]
            ),
            errors[keys].assign(
                metric="mse", task="forecast_" + errors["condition"], raw_score=errors["mse"]
            ),
            context[keys].assign(
                metric="context_gain", task="forecast", raw_score=context["mae_gain"]
            ),
        ],
        ignore_index=True,
    )


def rating_table(
    scores: pd.DataFrame, levels: int, specs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Ratings per (suite run, metric, task). ``scores``: suite_run_id, metric, task,
    system_id, raw_score (undefined scores are left out); ``specs``: the rating specs
    (default: the seed file)."""
    return rate_scores(
        scores, "reasoning", ["suite_run_id", "metric", "task"], "system_id", levels, specs
    )
