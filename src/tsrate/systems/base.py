"""The common interface of forecasting systems.

A system receives a batch of windows of one ticker under one perturbation and returns a
(windows × horizon) array of forecasts. It is created from the study (for its settings)
and the companies seed, and it says whether it can run here (:class:`Availability`).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Protocol

import numpy as np

from tsrate import TsrateError


@dataclasses.dataclass(frozen=True)
class Availability:
    available: bool
    reason: str


@dataclasses.dataclass(frozen=True)
class ForecastBatch:
    """The windows of one ticker under one perturbation.

    ``contexts`` are the inputs exactly as the system receives them (perturbed; NaN marks
    a missing value). ``clean_futures`` and ``study_range`` are ground truth, used only by
    the paper's deliberately unfair baselines (Biased uses the actual future, Random the
    study's price range); real systems must not read them.
    """

    ticker: str
    perturbation_id: str
    window_end_dates: np.ndarray
    contexts: np.ndarray
    horizon: int
    clean_futures: np.ndarray
    study_range: tuple[float, float]

    @property
    def n_windows(self) -> int:
        return int(self.contexts.shape[0])


class ForecastSystem(Protocol):
    system_id: str

    def fingerprint(self) -> str:
        """Settings that change forecasts (part of the partition key), e.g. 'order=1,1,1'."""

    def availability(self) -> Availability: ...

    def predict(self, batch: ForecastBatch) -> np.ndarray: ...

    # Optional: ``predict_quantiles(batch) -> QuantileForecasts`` for a system that gives a
    # predictive distribution; the forecasting loop then stores its quantiles too.
    # Optional: ``warm_up()``: import libraries and load weights, once per worker before its
    # first forecast, so that the forecasts' time is forecasting alone (the setup is
    # reported apart). Leave it out where loading may not be needed (a reply cache).


class ForecastOutputError(TsrateError):
    """A system returned something that is not a finite (windows × horizon) array."""


def check_forecasts(system_id: str, batch: ForecastBatch, output: object) -> np.ndarray:
    """Validate model output; name the system, ticker, perturbation and window on failure."""
    where = f"system {system_id!r}, ticker {batch.ticker}, perturbation {batch.perturbation_id}"
    try:
        array = np.asarray(output, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ForecastOutputError(f"{where}: output is not numeric ({exc})") from exc
    expected = (batch.n_windows, batch.horizon)
    if array.shape != expected:
        raise ForecastOutputError(f"{where}: output shape {array.shape}, expected {expected}")
    bad = ~np.isfinite(array)
    if bad.any():
        row = int(np.argwhere(bad)[0][0])
        raise ForecastOutputError(
            f"{where}: {int(bad.sum())} non-finite forecast value(s), first in the window "
            f"ending {batch.window_end_dates[row]}"
        )
    return array


#: The quantile levels tsrate stores beside point forecasts (fev's default levels).
QUANTILE_LEVELS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclasses.dataclass(frozen=True)
class WindowFallback:
    """A window the system did not really forecast: its model failed there (e.g. ARIMA's fit)
    and it gave the last observed value instead. The forecast is stored and scored as the
    system's; the window is recorded in ``raw.forecast_fallbacks`` so that analysts see it."""

    row: int
    reason: str


@dataclasses.dataclass(frozen=True)
class QuantileForecasts:
    """Point forecasts with quantile forecasts beside them.

    ``point`` is what ``predict`` would return without quantiles (an array, or partial
    forecasts); ``quantiles`` is (windows × horizon × len(QUANTILE_LEVELS)), level by level
    as :data:`QUANTILE_LEVELS`. A window whose quantiles are all NaN has none (e.g. ARIMA's
    fallback windows); it gets null probabilistic metrics, never a made-up interval.
    Quantiles are stored as the system gives them (not re-sorted). ``fallbacks``: the
    windows the system gave its last-value fallback for (:class:`WindowFallback`).
    """

    point: object
    quantiles: np.ndarray
    fallbacks: tuple[WindowFallback, ...] = ()


def check_fallbacks(
    system_id: str, batch: ForecastBatch, fallbacks: tuple[WindowFallback, ...]
) -> tuple[WindowFallback, ...]:
    """Validate fallback windows (distinct windows of the batch); returns them by row."""
    where = f"system {system_id!r}, ticker {batch.ticker}, perturbation {batch.perturbation_id}"
    rows = [fallback.row for fallback in fallbacks]
    if len(set(rows)) != len(rows):
        raise ForecastOutputError(f"{where}: a window is reported as a fallback twice")
    if any(not 0 <= row < batch.n_windows for row in rows):
        raise ForecastOutputError(f"{where}: a fallback names a window outside the batch")
    return tuple(sorted(fallbacks, key=lambda fallback: fallback.row))


def check_quantiles(system_id: str, batch: ForecastBatch, quantiles: object) -> np.ndarray:
    """Validate a quantile array: (windows × horizon × levels); per window all finite or all NaN."""
    where = f"system {system_id!r}, ticker {batch.ticker}, perturbation {batch.perturbation_id}"
    try:
        array = np.asarray(quantiles, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ForecastOutputError(f"{where}: quantiles are not numeric ({exc})") from exc
    expected = (batch.n_windows, batch.horizon, len(QUANTILE_LEVELS))
    if array.shape != expected:
        raise ForecastOutputError(f"{where}: quantile shape {array.shape}, expected {expected}")
    finite = np.isfinite(array).reshape(batch.n_windows, -1)
    mixed = finite.any(axis=1) & ~finite.all(axis=1)
    if mixed.any():
        row = int(np.flatnonzero(mixed)[0])
        raise ForecastOutputError(
            f"{where}: the window ending {batch.window_end_dates[row]} has some but not all "
            "quantiles finite (a window has all its quantiles or none)"
        )
    return array


def empirical_change_quantiles(contexts: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Quantiles of the context's own ``lag``-step changes, per window and horizon step.

    The rule of the naive baselines: a point forecast that repeats the value ``lag`` steps
    back from the target gets, at each level q, ``point + quantile_q(x[t] - x[t - lag])``
    over every pair of observed context values ``lag`` apart (numpy's default linear
    interpolation). Returns (windows × horizon × levels) offsets to add to the point
    forecasts; a window with no such pair gets NaN (no quantiles).
    """
    contexts = np.asarray(contexts, dtype=float)
    n_windows = contexts.shape[0]
    out = np.full((n_windows, len(lags), len(QUANTILE_LEVELS)), np.nan)
    levels = np.asarray(QUANTILE_LEVELS)
    for step, lag in enumerate(np.asarray(lags, dtype=int)):
        if lag >= contexts.shape[1]:
            continue
        changes = contexts[:, lag:] - contexts[:, :-lag]
        # rows without a missing change in one sorted pass (numpy's nanquantile goes row by
        # row once any value is NaN: 10 % of a default run's worker time went there)
        gaps = np.isnan(changes).any(axis=1)
        if not gaps.all():
            out[~gaps, step, :] = np.quantile(changes[~gaps], levels, axis=1).T
        if gaps.any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all missing: NaN, no quantiles
                out[gaps, step, :] = np.nanquantile(changes[gaps], levels, axis=1).T
    return out


def whole_windows(quantiles: np.ndarray) -> np.ndarray:
    """``quantiles`` (windows × horizon × levels) with every window that lacks some step's
    quantiles (NaN there) set wholly to NaN: a window has all its quantiles or none
    (:func:`check_quantiles`). E.g. the naive baselines' step h has no change quantiles when
    its lag reaches past the context (horizon ≥ context length), nor when no two observed
    values lie that far apart."""
    out = np.array(quantiles, dtype=float)
    out[~np.isfinite(out).reshape(len(out), -1).all(axis=1)] = np.nan
    return out
