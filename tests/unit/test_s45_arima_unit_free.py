"""ARIMA is unit-free: each window is fitted on a copy of its context divided by its mean
absolute observed value (rounded to a fixed grid, so the copy has the same bits in every
unit) and its forecasts and quantiles are scaled back. Checked on real prices (the bundled
skfolio S&P 500 closes, the default study's 80-day windows, stride 1, 20-day horizon) at
prices x100 and x0.01. Before, the optimiser stopped elsewhere on the likelihood's flat
ridge in another unit: forecasts up to 2e-4 and quantiles up to 1.3e-3 apart (relative)
on these windows."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.support.forecast_batch import closes, series_batch
from tsrate.robustness.sources import load_skfolio_sp500
from tsrate.systems.arima import ArimaSystem, settle, unit_free, unit_scale
from tsrate.systems.base import ForecastBatch, QuantileForecasts

N, H, WINDOWS = 80, 20, 16
FACTORS = (100.0, 0.01)
#: the forecasts in another unit are the same bits times the scale's rounding (measured up
#: to 6e-15 relative for quantiles, 6e-16 for points)
RTOL = 1e-12


def batch(ticker: str, perturbation: str) -> ForecastBatch:
    values = closes(ticker, "2022-01-01")
    return series_batch(values, perturbation, N, H, WINDOWS, ticker=ticker)


def in_unit(b: ForecastBatch, factor: float) -> ForecastBatch:
    return replace(b, contexts=b.contexts * factor)


def forecast(b: ForecastBatch) -> QuantileForecasts:
    system = ArimaSystem()
    out = system.predict_quantiles(b)
    assert system.fallbacks == 0
    return out


@pytest.fixture(autouse=True, scope="module")
def one_blas_thread():
    """One BLAS thread, as forecast workers run."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def assert_unit_free(b: ForecastBatch) -> None:
    base = forecast(b)
    assert np.all(np.isfinite(base.point)) and np.all(np.isfinite(base.quantiles))
    for factor in FACTORS:
        other = forecast(in_unit(b, factor))
        np.testing.assert_allclose(other.point, base.point * factor, rtol=RTOL, atol=0)
        np.testing.assert_allclose(other.quantiles, base.quantiles * factor, rtol=RTOL, atol=0)


@pytest.mark.parametrize(("ticker", "perturbation"), [("AAPL", "P0"), ("MSFT", "P1")])
def test_forecasts_and_quantiles_scale_with_the_unit(ticker, perturbation):
    """MSFT P1: a zeroed value inside the context (the MA root runs to the unit circle)."""
    assert_unit_free(batch(ticker, perturbation))


def test_missing_values_are_unit_free_too():
    b = batch("AAPL", "P3")
    assert np.isnan(b.contexts).any()
    assert_unit_free(b)


def test_the_fitted_copy_has_the_same_bits_in_every_unit():
    contexts = batch("JPM", "P0").contexts
    for context in contexts:
        copy, scale = unit_free(context)
        for factor in FACTORS:
            other, other_scale = unit_free(context * factor)
            np.testing.assert_array_equal(other, copy)
            assert other_scale == pytest.approx(scale * factor, rel=1e-14)


@pytest.mark.parametrize("last", [0.0, np.nan])
def test_a_context_ending_in_zero_or_missing_forecasts(last):
    """P1 can zero a context's last value and P3 remove it: the scale is the mean absolute
    observed value, so neither makes it 0 or NaN."""
    b = batch("JPM", "P0")
    contexts = b.contexts[:4].copy()
    contexts[:, -1] = last
    short = replace(b, contexts=contexts, window_end_dates=b.window_end_dates[:4])
    for context in contexts:
        scale = unit_scale(context)
        assert np.isfinite(scale) and scale > 0
        assert scale == pytest.approx(np.nanmean(np.abs(context)), rel=1e-14)
    assert_unit_free(short)


def test_scale_of_a_context_without_a_nonzero_value_is_one():
    assert unit_scale(np.zeros(N)) == 1.0
    assert unit_scale(np.full(N, np.nan)) == 1.0
    assert unit_scale(np.array([0.0, np.nan, 0.0])) == 1.0
    assert unit_scale(np.array([-2.0, np.nan, 4.0])) == 3.0


def test_a_context_of_zeros_still_forecasts():
    b = batch("JPM", "P0")
    zeros = replace(b, contexts=np.zeros((2, N)), window_end_dates=b.window_end_dates[:2])
    system = ArimaSystem()
    out = system.predict(zeros)
    assert out.shape == (2, H) and not np.isnan(out).any()
    np.testing.assert_allclose(out, 0.0, atol=1e-12)


def test_unit_free_forecasts_are_stored_apart_from_the_old_fits():
    assert ArimaSystem().fingerprint().endswith(";unit=free")
    assert ArimaSystem(warm_start=False).fingerprint().endswith(";unit=free")


def test_step_changes_within_floating_noise_are_zero():
    one_ulp = np.nextafter(1.0, 2.0)
    np.testing.assert_array_equal(
        settle(np.array([1.0, one_ulp, one_ulp + 1e-6, 2.0, 2.0 + 1e-11])),
        [1.0, 1.0, one_ulp + 1e-6, 2.0, 2.0 + 1e-11],
    )


def test_the_signs_of_the_step_changes_are_the_same_in_every_unit():
    """AAPL P1, 30-day windows from 2022-06-01, horizon 6: window 50's forecast converges, its
    last step moves by one unit in the last place, which x0.01 rounded to no move (its sign
    accuracy 50 at x1, 33.3 at x0.01, before such steps were settled at 0)."""
    frame = load_skfolio_sp500(["AAPL"])
    dates = frame["price_date"].astype(str)
    values = frame[(dates >= "2022-06-01") & (dates <= "2022-10-31")]["close"].to_numpy()
    b = series_batch(values, "P1", 30, 6, 51)
    signs = np.sign(np.diff(forecast(b).point, axis=1))
    for factor in FACTORS:
        other = np.sign(np.diff(forecast(in_unit(b, factor)).point, axis=1))
        np.testing.assert_array_equal(other, signs)
