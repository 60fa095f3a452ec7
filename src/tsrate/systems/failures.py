"""Forecasts of a batch in which some windows failed (e.g. an unparseable LLM reply).

A system that can fail window by window returns :class:`PartialForecasts` instead of a plain
array: the failed windows' rows are NaN and each failure keeps the raw model output and the
reason. The forecasting loop stores the good windows in ``raw.forecasts`` and every failed
one in ``raw.forecast_failures`` (same transaction); nothing is dropped silently or
zero-filled. Downstream, a window (ticker × window_end_date) that any system failed under
any perturbation is left out of every system's scores under every perturbation
(``int_forecasts_selected``): systems are compared on the same windows and each system's
counterfactual grid (every window under every perturbation, which the robustness marts
need) stays complete; ``marts.forecast_failures_summary`` counts them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tsrate.systems.base import ForecastBatch, ForecastOutputError, check_forecasts

#: Raw model output kept per failure (characters); longer text is cut and marked.
RAW_TEXT_LIMIT = 4000


@dataclasses.dataclass(frozen=True)
class WindowFailure:
    """One window without a forecast: its row in the batch, why, and what the model said."""

    row: int
    reason: str
    raw_text: str

    def __post_init__(self) -> None:
        if len(self.raw_text) > RAW_TEXT_LIMIT:
            cut = self.raw_text[:RAW_TEXT_LIMIT] + f"… [{len(self.raw_text)} characters]"
            object.__setattr__(self, "raw_text", cut)


@dataclasses.dataclass(frozen=True)
class PartialForecasts:
    """``values``: (windows × horizon), NaN exactly on the rows of ``failures``."""

    values: np.ndarray
    failures: tuple[WindowFailure, ...]

    @property
    def failed_rows(self) -> np.ndarray:
        return np.array(sorted(f.row for f in self.failures), dtype=int)


def check_partial_forecasts(
    system_id: str, batch: ForecastBatch, output: PartialForecasts
) -> PartialForecasts:
    """Validate a partial result: failures name distinct windows of the batch, and every
    other window holds finite forecasts (checked as :func:`check_forecasts` does)."""
    where = f"system {system_id!r}, ticker {batch.ticker}, perturbation {batch.perturbation_id}"
    rows = [f.row for f in output.failures]
    if len(set(rows)) != len(rows):
        raise ForecastOutputError(f"{where}: a window is reported as failed twice")
    if any(not 0 <= row < batch.n_windows for row in rows):
        raise ForecastOutputError(f"{where}: a failure names a window outside the batch")
    values = np.asarray(output.values, dtype=float)
    if values.shape != (batch.n_windows, batch.horizon):
        raise ForecastOutputError(
            f"{where}: output shape {values.shape}, expected {(batch.n_windows, batch.horizon)}"
        )
    good = np.setdiff1d(np.arange(batch.n_windows), output.failed_rows)
    subset = dataclasses.replace(
        batch,
        window_end_dates=batch.window_end_dates[good],
        contexts=batch.contexts[good],
        clean_futures=batch.clean_futures[good],
    )
    checked = values.copy()
    if len(good):
        checked[good] = check_forecasts(system_id, subset, values[good])
    checked[output.failed_rows] = np.nan
    return PartialForecasts(checked, tuple(sorted(output.failures, key=lambda f: f.row)))
