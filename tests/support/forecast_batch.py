"""The forecast batch the language-model system tests forecast: three windows of N values
(one missing, as after P3), horizon D; and batches of a real price series' windows, for the
tests of the numeric systems. No test here."""

from __future__ import annotations

import numpy as np

from tsrate.inputs.perturbations import perturb_series
from tsrate.inputs.windows import contexts, futures, window_end_positions
from tsrate.robustness.sources import load_skfolio_sp500
from tsrate.systems.base import ForecastBatch

N, D = 12, 4


def make_batch(n_windows: int = 3) -> ForecastBatch:
    rng = np.random.default_rng(0)
    contexts = 100 + np.cumsum(rng.normal(size=(n_windows, N)), axis=1)
    contexts[min(1, n_windows - 1), 5] = np.nan  # P3-style missing value
    return ForecastBatch(
        "AAPL",
        "P3",
        np.array(["2022-06-01", "2022-06-02", "2022-06-03"][:n_windows], dtype="datetime64[D]"),
        contexts,
        D,
        np.zeros((n_windows, D)),
        (0.0, 1.0),
    )


def closes(ticker: str, since: str) -> np.ndarray:
    """``ticker``'s bundled skfolio S&P 500 closes from ``since`` (a date) on."""
    frame = load_skfolio_sp500([ticker])
    return frame[frame["price_date"].astype(str) >= since]["close"].to_numpy()


def series_batch(
    values: np.ndarray,
    perturbation: str,
    n: int,
    d: int,
    windows: int,
    ticker: str = "AAPL",
    phase: int = 0,
) -> ForecastBatch:
    """The first ``windows`` windows of ``values`` (n inputs, d ahead, stride 1), their
    inputs perturbed by ``perturbation`` every n values from ``phase``; window ids 0, 1, ...;
    the scale is the clean series' range."""
    inputs, _ = perturb_series(values, perturbation, every=n, phase=phase)
    ends = window_end_positions(len(values), n, d)[:windows]
    return ForecastBatch(
        ticker,
        perturbation,
        np.arange(len(ends)),
        contexts(inputs, ends, n),
        d,
        futures(values, ends, d),
        (float(values.min()), float(values.max())),
    )
