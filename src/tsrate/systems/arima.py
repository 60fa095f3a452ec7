"""ARIMA (the paper's S_a): one statsmodels state-space ARIMA fit per window.

The state-space (Kalman filter) form handles missing inputs (P3) natively. The order is a
study setting (``arima_order`` var, default (1, 1, 1)); the innovation variance is
concentrated out of the likelihood, which fits faster and gives the same optimum.
A window whose optimiser fails falls back to the last observed value and is counted.

Warm starts: consecutive windows of a batch share all but one value (stride 1), so each fit
starts from the previous window's estimates (``start_params``) instead of statsmodels' own
start; the first window, and one after a failed or non-finite fit, starts cold. Measured on
the default study (``benchmarks/bench_arima.py``, BENCHMARKS.md): fewer optimiser steps per
fit, forecasts within the tolerance below of the cold fits'. ARIMA(1,1,1)'s likelihood has a
flat ridge where the AR and MA roots nearly cancel, so L-BFGS stops at slightly different
points from different starts; cold fits miss the best optimum found as often as warm ones.

Tolerance (tested on real prices, ``tests/unit/test_arima_warm.py``): per window, the
relative difference max_h |warm_h - cold_h| / |cold_h| has a median below
:data:`WARM_MEDIAN_TOLERANCE` and a maximum below :data:`WARM_MAX_TOLERANCE`.
``ArimaSystem(warm_start=False)`` fits cold (its forecasts are stored apart: the fingerprint
says which).

Quantiles: the fitted model's Gaussian predictive distribution, mean + z_q * standard error
of each step's forecast (statsmodels' ``get_forecast``); a fallback window has none.
"""

from __future__ import annotations

import warnings

import numpy as np

from tsrate.systems.base import QUANTILE_LEVELS, Availability, ForecastBatch, QuantileForecasts

#: warm vs cold fits: the median over windows of the relative forecast difference is below
#: this (measured: 0.000 % over 240 windows, 0.33 % on AAPL P0 alone: the likelihood's ridge)
WARM_MEDIAN_TOLERANCE = 0.01
#: ... and every window's below this (measured up to ~7 %: another point of the ridge, which
#: cold fits reach too, up to ~6 % from the best optimum found)
WARM_MAX_TOLERANCE = 0.10


class ArimaSystem:
    system_id = "arima"

    def __init__(self, order: tuple[int, int, int] = (1, 1, 1), warm_start: bool = True):
        self.order = tuple(int(x) for x in order)
        self.warm_start = warm_start
        self.fallbacks = 0

    def fingerprint(self) -> str:
        import statsmodels

        start = ";start=warm" if self.warm_start else ""
        return f"order={self.order};statsmodels={statsmodels.__version__}{start}"

    @staticmethod
    def next_start(fitted) -> np.ndarray | None:  # noqa: ANN001 - a statsmodels results object
        """The start parameters for the next window: this fit's estimates when they are
        finite, else None (a cold start)."""
        params = np.asarray(fitted.params, dtype=float)
        return params if np.all(np.isfinite(params)) else None

    def availability(self) -> Availability:
        try:
            import statsmodels  # noqa: F401
        except ImportError:
            return Availability(False, "statsmodels is not installed")
        return Availability(True, f"statsmodels ARIMA{self.order}")

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        return self.predict_quantiles(batch).point

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        from scipy.stats import norm
        from statsmodels.tsa.statespace.sarimax import SARIMAX

        z = norm.ppf(np.asarray(QUANTILE_LEVELS))
        out = np.empty((batch.n_windows, batch.horizon))
        quantiles = np.full((batch.n_windows, batch.horizon, len(z)), np.nan)
        start = None
        for row, context in enumerate(batch.contexts):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = SARIMAX(context, order=self.order, concentrate_scale=True)
                    fitted = model.fit(disp=False, start_params=start)
                    start = self.next_start(fitted) if self.warm_start else None
                    predicted = fitted.get_forecast(batch.horizon)
                    forecast = np.asarray(predicted.predicted_mean, dtype=float)
                    if not np.all(np.isfinite(forecast)):
                        raise ValueError("non-finite forecast")
                    out[row] = forecast
                    spread = np.sqrt(np.asarray(predicted.var_pred_mean, dtype=float))
                    if np.all(np.isfinite(spread)):
                        quantiles[row] = forecast[:, None] + spread[:, None] * z[None, :]
                except (ValueError, np.linalg.LinAlgError):
                    start = None
                    self.fallbacks += 1
                    observed = context[~np.isnan(context)]
                    out[row] = observed[-1] if len(observed) else np.nan
        return QuantileForecasts(out, quantiles)


def create(study, companies) -> ArimaSystem:  # noqa: ANN001 - registry signature
    return ArimaSystem(study.arima_order)
