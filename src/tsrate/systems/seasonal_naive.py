"""Seasonal naive: repeat the last observed season of the input over the horizon.

The baseline fev's leaderboard divides by. The season is one trading week
(``SEASON_LENGTH`` = 5 trading days, the seasonality gluonts and fev use for business-day
data): step h repeats the value ``lag_h = 5 * ceil(h / 5)`` steps before its target, i.e.
the same weekday one, two, … weeks back from the forecast origin. A missing value there (P3)
falls back to the last observed value before it.

Quantiles (the rule of :func:`tsrate.systems.base.empirical_change_quantiles`): at step h,
the point forecast plus the empirical quantiles of the context's own ``lag_h``-step changes
x[t] - x[t - lag_h]. A window where some step has no such change (lag_h ≥ the context
length) gets no quantiles.
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

#: trading days per season (one week)
SEASON_LENGTH = 5


def seasonal_lags(horizon: int, season_length: int = SEASON_LENGTH) -> np.ndarray:
    """``lag_h``: how many steps before its target step h's forecast value lies."""
    steps = np.arange(1, horizon + 1)
    return season_length * np.ceil(steps / season_length).astype(int)


class SeasonalNaiveSystem:
    system_id = "seasonal_naive"

    def __init__(self, season_length: int = SEASON_LENGTH):
        self.season_length = int(season_length)

    def fingerprint(self) -> str:
        return f"season={self.season_length};missing=last-observed-before"

    def availability(self) -> Availability:
        return Availability(True, "built in")

    def predict(self, batch: ForecastBatch) -> np.ndarray:
        values = np.asarray(batch.contexts, dtype=float)
        n_windows, length = values.shape
        # forward-fill each row so a missing source value takes the last observed one before it
        observed = ~np.isnan(values)
        index = np.where(observed, np.arange(length), 0)
        np.maximum.accumulate(index, axis=1, out=index)
        filled = values[np.arange(n_windows)[:, None], index]
        filled[~np.maximum.accumulate(observed, axis=1)] = np.nan
        steps = np.arange(1, batch.horizon + 1)
        # target step h sits at position length - 1 + h; its source lag_h steps before it
        source = length - 1 + steps - seasonal_lags(batch.horizon, self.season_length)
        source = np.clip(source, 0, length - 1)
        out = filled[:, source]
        # a row whose source is missing with nothing observed before it: the last observed value
        last = filled[:, -1]
        return np.where(np.isnan(out), last[:, None], out)

    def predict_quantiles(self, batch: ForecastBatch) -> QuantileForecasts:
        point = self.predict(batch)
        lags = seasonal_lags(batch.horizon, self.season_length)
        offsets = empirical_change_quantiles(batch.contexts, lags)
        return QuantileForecasts(point, whole_windows(point[:, :, None] + offsets))


def create(study, companies) -> SeasonalNaiveSystem:  # noqa: ANN001 - registry signature
    return SeasonalNaiveSystem()
