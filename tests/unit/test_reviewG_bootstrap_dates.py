"""Review G: the accuracy bootstrap of rating_stability resamples the run's window dates,
the same alternative histories as every other metric.

``block_bootstrap_ratings`` (the accuracy metrics of ``rating_stability``, called with
every window row of the run) took its dates from the rows with a finite value only. A date
on which no system has the metric (MASE is null for a flat context, e.g. on a one-ticker
study) shrank the date list: the moving-block draws then came from another random stream
than those of WRS, APE and PIE (the module promises one history per resample for every
metric), and with fewer such dates than the block length the build stopped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tsrate.methods.ratings import block_bootstrap_ratings, date_multiplicities

DATES = pd.date_range("2024-01-01", periods=10, freq="D")
RESAMPLES, BLOCK, SEED, CONFIDENCE = 40, 3, 7, 0.9


def frame(values: dict[str, list[float]]) -> pd.DataFrame:
    rows = [
        {"system_id": system, "perturbation_id": "P1", "window_end_date": day, "value": value}
        for system, series in values.items()
        for day, value in zip(DATES, series, strict=True)
    ]
    return pd.DataFrame(rows)


def resampled_means(series: list[float]) -> np.ndarray:
    """Per resample of the run's 10 dates: the mean over the drawn dates with a value."""
    weights = date_multiplicities(len(DATES), BLOCK, RESAMPLES, SEED)
    x = np.asarray(series, dtype=float)
    known = np.isfinite(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights[:, known] @ x[known]) / weights[:, known].sum(axis=1)


def test_a_date_without_values_keeps_the_runs_histories() -> None:
    nan = float("nan")
    values = {
        "a": [1.0, 2.0, 3.0, 4.0, nan, 6.0, 7.0, 8.0, 9.0, 10.0],
        "b": [3.0, 1.0, 4.0, 1.0, nan, 9.0, 2.0, 6.0, 5.0, 3.0],
    }
    out = block_bootstrap_ratings(
        frame(values), 2, RESAMPLES, BLOCK, SEED, "mean", confidence=CONFIDENCE, ideal=None
    )
    for system, series in values.items():
        boot = resampled_means(series)
        point = float(np.nanmean(series))
        low, high = np.quantile(boot, [0.05, 0.95])
        row = out[(out["system_id"] == system) & (out["rating_level"] == 1)].iloc[0]
        assert row["raw_score"] == pytest.approx(point, rel=1e-12)
        assert row["ci_low"] == pytest.approx(min(low, point), rel=1e-9)
        assert row["ci_high"] == pytest.approx(max(high, point), rel=1e-9)


def test_fewer_dates_with_values_than_the_block_length_still_resample() -> None:
    nan = float("nan")
    values = {
        "a": [1.0, 2.0] + [nan] * 8,
        "b": [4.0, 3.0] + [nan] * 8,
    }
    out = block_bootstrap_ratings(
        frame(values), 2, RESAMPLES, BLOCK, SEED, "mean", confidence=CONFIDENCE, ideal=None
    )
    weights = date_multiplicities(len(DATES), BLOCK, RESAMPLES, SEED)
    drawn = int((weights[:, :2].sum(axis=1) > 0).sum())
    assert 0 < drawn < RESAMPLES
    assert (out["n_valid"] == drawn).all()
