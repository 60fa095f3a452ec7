"""The common interface of forecasting systems.

A system receives a batch of windows of one ticker under one perturbation and returns a
(windows × horizon) array of forecasts. It is created from the study (for its settings)
and the companies seed, and it says whether it can run here (:class:`Availability`).
"""

from __future__ import annotations

import dataclasses
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
