"""The copy study the unit and mart tests share: the naive baseline and seasonal naive at a
horizon of 3, whose forecast is a stretch of its context (5, 4 and 3 steps before the
origin) on every window whose stretch has no missing value; the tests count copies
themselves from the stored inputs and forecasts (plain loops). Nothing here starts a
process."""

from __future__ import annotations

import math

import pandas as pd

from tests.support.warehouses import read, small_study
from tsrate.config import Study

CONTEXT = 12
HORIZON = 3


def study() -> Study:
    return small_study(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-09-01",
        study_end="2022-12-28",
        context_length=CONTEXT,
        horizon=HORIZON,
        perturbations=["P0", "P1", "P3"],
        systems=["naive", "seasonal_naive"],
    )


def stored_windows(warehouse) -> pd.DataFrame:
    """Each stored window with its context (from raw.perturbed_inputs) and its forecast (from
    raw.forecasts), per partition."""
    inputs = read(
        warehouse,
        "select ticker, perturbation_id, price_date, input_value from raw.perturbed_inputs "
        "order by ticker, perturbation_id, position",
    )
    forecasts = read(
        warehouse,
        "select partition_key, system_id, ticker, perturbation_id, window_end_date, "
        "list(forecast order by horizon_step) as forecast from raw.forecasts group by all",
    )
    series = {
        key: (pd.to_datetime(group["price_date"]).tolist(), group["input_value"].tolist())
        for key, group in inputs.groupby(["ticker", "perturbation_id"])
    }
    contexts = []
    for row in forecasts.itertuples():
        dates, values = series[(row.ticker, row.perturbation_id)]
        at = dates.index(pd.Timestamp(row.window_end_date))
        contexts.append(values[at - CONTEXT + 1 : at + 1])
    return forecasts.assign(context=contexts)


def is_copy(context, forecast) -> bool:
    d = len(forecast)
    return any(
        all(
            context[i + j] is not None
            and not math.isnan(context[i + j])
            and math.isclose(forecast[j], context[i + j], rel_tol=1e-9, abs_tol=0.0)
            for j in range(d)
        )
        for i in range(len(context) - d + 1)
    )
