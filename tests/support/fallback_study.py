"""The fallback study the unit and mart tests share: ARIMA(1,2,1) on 3-value contexts, where
a fully observed context fails statsmodels' start values and a context with one missing value
(P3) fits; the tests find the failing windows themselves, with statsmodels alone, from the
stored inputs. Nothing here starts a process."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from tests.support.warehouses import read, small_study
from tsrate.config import Study

ORDER = (1, 2, 1)
CONTEXT = 3
HORIZON = 2


def study(tickers: tuple[str, ...] = ("AAPL",)) -> Study:
    return small_study(
        study_tickers=list(tickers),
        study_start="2022-10-03",
        study_end="2022-10-21",
        context_length=CONTEXT,
        horizon=HORIZON,
        perturbations=["P0", "P3"],
        systems=["arima", "naive"],
        arima_order=list(ORDER),
    )


def cold_fit_fails(context: np.ndarray) -> bool:
    """Whether statsmodels' SARIMAX cannot forecast ``context`` (fitted from its own start):
    an exception of the kinds a fit raises, or a non-finite forecast."""
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fitted = SARIMAX(context, order=ORDER, concentrate_scale=True).fit(disp=False)
            forecast = np.asarray(fitted.get_forecast(HORIZON).predicted_mean, dtype=float)
        except (ValueError, np.linalg.LinAlgError, IndexError):
            return True
    return not np.all(np.isfinite(forecast))


def stored_contexts(warehouse) -> pd.DataFrame:
    """Every (ticker, perturbation, window) of the run with its context as the system got it,
    read back from raw.perturbed_inputs and raw.windows."""
    inputs = read(
        warehouse,
        "select ticker, perturbation_id, position, price_date, input_value "
        "from raw.perturbed_inputs order by ticker, perturbation_id, position",
    )
    windows = read(warehouse, "select ticker, window_end_date from raw.windows")
    out = []
    for (ticker, perturbation), series in inputs.groupby(["ticker", "perturbation_id"]):
        dates = pd.to_datetime(series["price_date"]).tolist()
        values = series["input_value"].to_numpy(dtype=float)
        for end in pd.to_datetime(windows[windows["ticker"] == ticker]["window_end_date"]):
            at = dates.index(end)
            context = values[at - CONTEXT + 1 : at + 1]
            out.append((ticker, perturbation, end.date(), context))
    return pd.DataFrame(out, columns=["ticker", "perturbation_id", "window_end_date", "context"])
