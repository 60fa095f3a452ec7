"""The naive baselines' quantiles come whole per window, or not at all.

A step whose lag reaches past the context (naive: horizon ≥ context_length; seasonal
naive: 5·ceil(h/5) ≥ context_length, e.g. a 20-day context with a 20-day horizon) has no
pair of context values that far apart, so it has no empirical change quantiles. The
forecasting loop accepts a window's quantiles only all finite or all missing
(``check_quantiles``): such a window must come without quantiles, not fail the whole run.
Expected values are worked out here with np.quantile over each window's own changes."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.systems.base import QUANTILE_LEVELS, ForecastBatch, check_quantiles
from tsrate.systems.naive import NaiveSystem
from tsrate.systems.seasonal_naive import SeasonalNaiveSystem


def batch(contexts: np.ndarray, horizon: int) -> ForecastBatch:
    n_windows = len(contexts)
    dates = np.datetime64("2022-06-01") + np.arange(n_windows)
    return ForecastBatch(
        "AAPL", "P0", dates, contexts, horizon, np.zeros((n_windows, horizon)), (0.0, 1.0)
    )


def walks(n_windows: int, width: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return 100 + np.cumsum(rng.normal(0, 1, size=(n_windows, width)), axis=1)


@pytest.mark.parametrize(
    ("system", "width", "horizon"),
    [
        (NaiveSystem(), 10, 12),  # steps 10-12: no pair 10-12 apart in 10 values
        (SeasonalNaiveSystem(), 20, 20),  # steps 16-20: lag 20, no pair in 20 values
    ],
)
def test_a_step_without_changes_leaves_its_window_without_quantiles(system, width, horizon):
    contexts = walks(3, width)
    work = batch(contexts, horizon)
    output = system.predict_quantiles(work)
    quantiles = check_quantiles(system.system_id, work, output.quantiles)  # the loop's check
    assert np.isnan(quantiles).all()
    # the point forecasts stay: naive repeats the last value; seasonal naive step h the
    # value 5·ceil(h/5) before its target (the last five values, repeated)
    if isinstance(system, NaiveSystem):
        expected = np.repeat(contexts[:, -1:], horizon, axis=1)
    else:
        expected = np.tile(contexts[:, -5:], horizon // 5)
    np.testing.assert_array_equal(output.point, expected)


def test_windows_with_every_step_keep_theirs_the_others_get_none():
    """Window 0 is complete; window 1 misses every other value, so no two observed values
    are one day apart (step 1 has no change) while steps 2 and 3 have some."""
    contexts = walks(2, 9, seed=8)
    contexts[1, 1::2] = np.nan
    work = batch(contexts, 3)
    output = NaiveSystem().predict_quantiles(work)
    quantiles = check_quantiles("naive", work, output.quantiles)
    assert np.isnan(quantiles[1]).all()
    for step, lag in enumerate((1, 2, 3)):
        changes = [contexts[0, t] - contexts[0, t - lag] for t in range(lag, 9)]
        np.testing.assert_allclose(
            quantiles[0, step], contexts[0, -1] + np.quantile(changes, QUANTILE_LEVELS)
        )
