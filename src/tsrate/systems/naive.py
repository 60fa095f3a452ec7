"""Naive last value: repeat the last observed (non-missing) input over the horizon.

Quantiles (the rule of :func:`tsrate.systems.base.empirical_change_quantiles`): at step h,
the point forecast plus the empirical quantiles of the context's own h-step changes
x[t] - x[t-h], so the interval widens with the horizon as the series' own moves do. A
window where some step has no such change (h ≥ the context length) gets no quantiles.
"""

from __future__ import annotations

import numpy as np

from tsrate.systems.base import (
    Availability,
    ForecastBatch,
    QuantileForecasts,
    empirical_change_quantiles,
    whole_windows,
)


class NaiveSystem:
    system_id = "naive"

    def fingerprint(self) -> str:
        return "last-non-missing"

    def availability(self) -> Availability:
        return Availability(True, "built in")

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        point = self.predict(batch)
        offsets = empirical_change_quantiles(batch.contexts, np.arange(1, batch.horizon + 1))
        return QuantileForecasts(point, whole_windows(point[:, :, None] + offsets))

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        values = batch.contexts
        observed = ~np.isnan(values)
        # index of the last observed value per row (a whole-missing row has none: NaN out)
        last = values.shape[1] - 1 - np.argmax(observed[:, ::-1], axis=1)
        level = values[np.arange(len(values)), last]
        level[~observed.any(axis=1)] = np.nan
        return np.repeat(level[:, None], batch.horizon, axis=1)


def create(study, companies) -> NaiveSystem:  # noqa: ANN001 - registry signature
    return NaiveSystem()
