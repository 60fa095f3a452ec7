"""The forecast batch the language-model system tests forecast: three windows of N values
(one missing, as after P3), horizon D. No test here."""

from __future__ import annotations

import numpy as np

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
