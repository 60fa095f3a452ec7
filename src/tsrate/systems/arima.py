"""ARIMA (the paper's S_a): one statsmodels state-space ARIMA fit per window.

The state-space (Kalman filter) form handles missing inputs (P3) natively. The order is a
study setting (``arima_order`` var, default (1, 1, 1)); the innovation variance is
concentrated out of the likelihood, which fits faster and gives the same optimum.
A window whose optimiser fails falls back to the last observed value and is counted.

Quantiles: the fitted model's Gaussian predictive distribution, mean + z_q * standard error
of each step's forecast (statsmodels' ``get_forecast``); a fallback window has none.
"""

from __future__ import annotations

import warnings

import numpy as np

from tsrate.systems.base import QUANTILE_LEVELS, Availability, ForecastBatch, QuantileForecasts


class ArimaSystem:
    system_id = "arima"

    def __init__(self, order: tuple[int, int, int] = (1, 1, 1)):
        self.order = tuple(int(x) for x in order)
        self.fallbacks = 0

    def fingerprint(self) -> str:
        import statsmodels

        return f"order={self.order};statsmodels={statsmodels.__version__}"

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
        for row, context in enumerate(batch.contexts):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    model = SARIMAX(context, order=self.order, concentrate_scale=True)
                    predicted = model.fit(disp=False).get_forecast(batch.horizon)
                    forecast = np.asarray(predicted.predicted_mean, dtype=float)
                    if not np.all(np.isfinite(forecast)):
                        raise ValueError("non-finite forecast")
                    out[row] = forecast
                    spread = np.sqrt(np.asarray(predicted.var_pred_mean, dtype=float))
                    if np.all(np.isfinite(spread)):
                        quantiles[row] = forecast[:, None] + spread[:, None] * z[None, :]
                except (ValueError, np.linalg.LinAlgError):
                    self.fallbacks += 1
                    observed = context[~np.isnan(context)]
                    out[row] = observed[-1] if len(observed) else np.nan
        return QuantileForecasts(out, quantiles)


def create(study, companies) -> ArimaSystem:  # noqa: ANN001 - registry signature
    return ArimaSystem(study.arima_order)
