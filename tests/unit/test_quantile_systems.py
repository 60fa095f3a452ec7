"""Quantile forecasts of the offline systems, each against an independent computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tsrate.systems.arima import ArimaSystem
from tsrate.systems.base import QUANTILE_LEVELS, ForecastBatch, ForecastOutputError, check_quantiles
from tsrate.systems.biased import BiasedSystem
from tsrate.systems.naive import NaiveSystem
from tsrate.systems.seasonal_naive import SeasonalNaiveSystem, seasonal_lags
from tsrate.systems.uniform_random import UniformRandomSystem


def make_batch(contexts: np.ndarray, horizon: int = 7) -> ForecastBatch:
    contexts = np.asarray(contexts, dtype=float)
    n = len(contexts)
    return ForecastBatch(
        "AAPL",
        "P0",
        np.arange(n),
        contexts,
        horizon,
        np.full((n, horizon), 100.0),
        (50.0, 150.0),
    )


@pytest.fixture
def walk() -> np.ndarray:
    rng = np.random.default_rng(3)
    return 100 + np.cumsum(rng.normal(0, 1, size=(2, 40)), axis=1)


def test_naive_quantiles_are_the_contexts_own_h_step_changes(walk):
    out = NaiveSystem().predict_quantiles(make_batch(walk))
    # hand-worked rule: point + np.quantile of x[t] - x[t-h] over the context
    for row, context in enumerate(walk):
        for step in range(1, 8):
            changes = [context[t] - context[t - step] for t in range(step, len(context))]
            expected = context[-1] + np.quantile(changes, QUANTILE_LEVELS)
            np.testing.assert_allclose(out.quantiles[row, step - 1], expected)
    np.testing.assert_array_equal(out.point, NaiveSystem().predict(make_batch(walk)))


def test_seasonal_naive_repeats_the_last_week_and_its_quantiles():
    context = np.arange(1.0, 21.0) ** 1.5  # x[i] = (i+1)^1.5, 20 values
    out = SeasonalNaiveSystem().predict_quantiles(make_batch([context], horizon=7))
    # steps 1-5 repeat the last 5 values, steps 6-7 the first two of them again
    np.testing.assert_allclose(out.point[0], context[[15, 16, 17, 18, 19, 15, 16]])
    np.testing.assert_array_equal(seasonal_lags(7), [5, 5, 5, 5, 5, 10, 10])
    step6 = np.quantile(context[10:] - context[:-10], QUANTILE_LEVELS)
    np.testing.assert_allclose(out.quantiles[0, 5], context[15] + step6)


def test_seasonal_naive_takes_the_last_observed_value_for_a_missing_source():
    context = np.arange(1.0, 21.0)
    context[16] = np.nan
    point = SeasonalNaiveSystem().predict(make_batch([context], horizon=5))
    np.testing.assert_allclose(point[0], [16, 16, 18, 19, 20])


def test_random_quantiles_are_its_uniform_distribution(walk):
    batch = make_batch(walk, horizon=5)
    out = UniformRandomSystem(1).predict_quantiles(batch)
    expected = stats.uniform(loc=50.0, scale=100.0).ppf(QUANTILE_LEVELS)
    np.testing.assert_allclose(out.quantiles[0, 0], expected)
    np.testing.assert_array_equal(out.point, UniformRandomSystem(1).predict(batch))


def test_biased_quantiles_are_a_point_mass(walk):
    out = BiasedSystem({"AAPL": 200.0}).predict_quantiles(make_batch(walk))
    np.testing.assert_allclose(out.quantiles, 300.0)


def test_arima_quantiles_match_statsmodels_intervals(walk):
    from statsmodels.tsa.statespace.sarimax import SARIMAX

    out = ArimaSystem((1, 1, 1)).predict_quantiles(make_batch(walk, horizon=5))
    fitted = SARIMAX(walk[0], order=(1, 1, 1), concentrate_scale=True).fit(disp=False)
    interval = np.asarray(fitted.get_forecast(5).conf_int(alpha=0.2))  # the 10 % and 90 % quantiles
    np.testing.assert_allclose(out.quantiles[0, :, 0], interval[:, 0], rtol=1e-6)
    np.testing.assert_allclose(out.quantiles[0, :, -1], interval[:, 1], rtol=1e-6)
    np.testing.assert_allclose(out.quantiles[0, :, 4], out.point[0])


def test_a_window_with_only_some_quantiles_is_refused(walk):
    batch = make_batch(walk, horizon=2)
    quantiles = np.ones((2, 2, len(QUANTILE_LEVELS)))
    quantiles[1, 0, 3] = np.nan
    with pytest.raises(ForecastOutputError, match="some but not all quantiles"):
        check_quantiles("x", batch, quantiles)
    with pytest.raises(ForecastOutputError, match="quantile shape"):
        check_quantiles("x", batch, quantiles[:, :, :5])


def test_partition_files_carry_quantiles_and_failures(tmp_path):
    """The distributed path (partition files) brings quantiles back level by level."""
    from tsrate.robustness.forecast.distributed import read_partition_file, write_partition_file
    from tsrate.robustness.forecast.plan import Partition
    from tsrate.systems.base import QuantileForecasts
    from tsrate.systems.failures import PartialForecasts, WindowFailure

    dates = np.array(["2022-01-03", "2022-01-04", "2022-01-05"], dtype="datetime64[D]")
    batch = ForecastBatch("AAPL", "P1", dates, np.ones((3, 4)), 2, np.ones((3, 2)), (1.0, 2.0))
    partition = Partition("naive", "AAPL", "P1", "k" * 32)
    point = np.arange(6, dtype=float).reshape(3, 2)
    point[1] = np.nan
    quantiles = np.arange(54, dtype=float).reshape(3, 2, 9)
    quantiles[1] = np.nan
    sent = QuantileForecasts(PartialForecasts(point, (WindowFailure(1, "bad", "x"),)), quantiles)
    path = write_partition_file(tmp_path, partition, dates, sent, 0.5)
    back, _ = read_partition_file(path, partition, batch)
    assert isinstance(back, QuantileForecasts)
    np.testing.assert_array_equal(back.quantiles, quantiles)
    assert [f.row for f in back.point.failures] == [1]
    np.testing.assert_array_equal(back.point.values, point)


def test_change_quantiles_of_rows_with_and_without_gaps_match_row_by_row():
    """Rows without a missing value go through one sorted pass, rows with gaps row by row:
    every row's offsets are np.quantile of its own observed lag-h changes (NaN: none)."""
    from tsrate.systems.base import empirical_change_quantiles

    rng = np.random.default_rng(11)
    contexts = 100 + np.cumsum(rng.normal(0, 1, size=(6, 30)), axis=1)
    contexts[1, [4, 17]] = np.nan  # gaps
    contexts[3, 29] = np.nan
    contexts[4, ::2] = np.nan  # no pair 1 apart observed: lag 1 has no change
    contexts[5, :] = np.nan  # nothing observed
    lags = np.array([1, 2, 5])
    out = empirical_change_quantiles(contexts, lags)
    for row, context in enumerate(contexts):
        for step, lag in enumerate(lags):
            changes = context[lag:] - context[:-lag]
            changes = changes[~np.isnan(changes)]
            if len(changes) == 0:
                assert np.isnan(out[row, step]).all()
            else:
                np.testing.assert_allclose(out[row, step], np.quantile(changes, QUANTILE_LEVELS))
    assert np.isfinite(out[[0, 2]]).all()
