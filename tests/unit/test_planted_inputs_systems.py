"""Science of the inputs and offline systems that the other unit tests leave open, each
checked against a hand-worked example or a property the definition fixes (found by planting
errors: tests/unit/test_windows_perturbations.py, test_systems.py, test_quantile_systems.py,
test_images.py, test_fracast.py cover the rest)."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.inputs import sentiment as st
from tsrate.systems.arima import ArimaSystem
from tsrate.systems.base import ForecastBatch
from tsrate.systems.seasonal_naive import SeasonalNaiveSystem
from tsrate.systems.uniform_random import UniformRandomSystem


def make_batch(contexts, horizon: int, perturbation: str = "P0") -> ForecastBatch:
    contexts = np.atleast_2d(np.asarray(contexts, dtype=float))
    n = len(contexts)
    return ForecastBatch(
        "AAPL",
        perturbation,
        np.arange(n),
        contexts,
        horizon,
        np.full((n, horizon), 100.0),
        (50.0, 150.0),
    )


# -- seasonal naive ----------------------------------------------------------------------------


def test_seasonal_naive_source_before_any_observed_value_takes_the_last_observed_one():
    """Context x = [nan, nan, 3, 4, 5, nan] (6 values), season 5, horizon 5: step h repeats
    x[5 + h - 5] = x[h]. x[1] has nothing observed before it and x[5] is missing: both take
    the last observed value of the context, 5 (the docstring's rule); x[2..4] = 3, 4, 5."""
    context = [np.nan, np.nan, 3.0, 4.0, 5.0, np.nan]
    point = SeasonalNaiveSystem().predict(make_batch([context], horizon=5))
    np.testing.assert_array_equal(point[0], [5.0, 3.0, 4.0, 5.0, 5.0])


# -- ARIMA -------------------------------------------------------------------------------------


def test_arima_window_whose_fit_fails_falls_back_to_the_last_observed_value():
    """A non-finite input makes the Kalman filter's forecast non-finite: the window falls back
    to its last observed (non-missing) value, 130 here, and is counted; it has no quantiles."""
    context = np.linspace(100.0, 130.0, 12)
    context[3] = np.inf
    system = ArimaSystem()
    with np.errstate(all="ignore"):
        out = system.predict_quantiles(make_batch([context], horizon=3))
    assert system.fallbacks == 1
    np.testing.assert_array_equal(out.point[0], [130.0, 130.0, 130.0])
    assert np.isnan(out.quantiles).all()


def test_arima_window_with_nothing_observed_is_missing_not_zero():
    """A context with no observed value has nothing to forecast from: the window is NaN (as
    naive gives) and counted as a fallback; SARIMAX itself would forecast its prior mean, 0,
    a number no price series suggested."""
    system = ArimaSystem()
    out = system.predict_quantiles(make_batch([np.full(10, np.nan)], horizon=3))
    assert system.fallbacks == 1
    assert np.isnan(out.point).all() and np.isnan(out.quantiles).all()


def test_arima_window_too_short_to_fit_falls_back_instead_of_failing_the_partition():
    """A two-value context is too short for statsmodels' start values (an IndexError inside
    SARIMAX): the window falls back to its last value and is counted, instead of the error
    failing the whole partition."""
    system = ArimaSystem()
    with np.errstate(all="ignore"):
        out = system.predict_quantiles(make_batch([np.array([101.0, 103.0])], horizon=3))
    assert system.fallbacks == 1
    np.testing.assert_array_equal(out.point[0], [103.0, 103.0, 103.0])


# -- random ------------------------------------------------------------------------------------


def test_random_draws_each_step_independently():
    """S_r draws every forecast step afresh: within a window the steps differ, and over many
    windows consecutive steps are uncorrelated (|r| < 0.1 at 2000 pairs: 4.5 standard errors)."""
    contexts = np.full((2000, 10), 100.0)
    out = UniformRandomSystem(5).predict(make_batch(contexts, horizon=4))
    assert (np.ptp(out, axis=1) > 0).all()
    r = np.corrcoef(out[:, 0], out[:, 1])[0, 1]
    assert abs(r) < 0.1
    # uniform on [50, 150]: mean 100, standard deviation 100 / sqrt(12)
    assert abs(out.mean() - 100.0) < 1.0 and abs(out.std() - 100 / np.sqrt(12)) < 1.0


# -- sentiment rows ----------------------------------------------------------------------------


class TrendRuleSentiment:
    """A sentiment system (the protocol's interface) that says the trend rule's label with
    lopsided probabilities, so each probability column can be told apart."""

    sentiment_system_id = "trend_rule"

    def fingerprint(self) -> str:
        return "trend_rule"

    def predict(self, contexts: np.ndarray) -> st.SentimentOutput:
        labels = st.trend_labels(contexts, 0.4)
        probabilities = np.full((len(labels), 3), 0.1)
        probabilities[np.arange(len(labels)), labels + 1] = 0.8
        return st.SentimentOutput(labels, probabilities)


def contexts_with_known_trends() -> np.ndarray:
    """Rows: rising line (score 1), falling line (−1), flat (0), and a ramp that rises over
    its first quarter and stays level, x = min(t, 9) / 9 for t = 0..39: its least-squares
    rise over its range is about 0.62 (:func:`test_ramp_score_by_hand`)."""
    t = np.arange(40.0)
    ramp = np.minimum(t, 9.0) / 9.0
    return np.stack([t, -t, np.ones(40), ramp])


def test_ramp_score_by_hand():
    t = np.arange(40.0)
    ramp = np.minimum(t, 9.0) / 9.0
    # ordinary least squares written out: cov(t, x) / var(t), times the n - 1 steps, over range 1
    slope = np.sum((t - t.mean()) * (ramp - ramp.mean())) / np.sum((t - t.mean()) ** 2)
    expected = slope * 39 / 1.0
    np.testing.assert_allclose(st.trend_scores(ramp[None])[0], expected, rtol=1e-12)
    assert 0.4 < expected < 0.9


def test_sentiment_rows_keep_each_probability_in_its_own_column_and_the_threshold():
    contexts = contexts_with_known_trends()
    dates = np.arange(4).astype("datetime64[D]")
    rows = st.sentiment_rows(TrendRuleSentiment(), "r", "AAPL", dates, contexts, 0.9)
    assert rows["sentiment"].tolist() == [1, -1, 0, 1]  # the system's own labels (0.4)
    # negative / neutral / positive: the 0.8 sits in the column of the system's label
    probabilities = rows[["probability_negative", "probability_neutral", "probability_positive"]]
    assert (probabilities.to_numpy().argmax(axis=1) - 1).tolist() == rows["sentiment"].tolist()
    assert rows["stripe_intensity"].tolist() == [255, 0, 128, 255]
    # the reference label uses the threshold passed in (0.9): the ramp's 0.62 is neutral
    assert rows["trend_label"].tolist() == [1, -1, 0, 0]
    np.testing.assert_allclose(rows["trend_score"].iloc[:3], [1.0, -1.0, 0.0], atol=1e-12)


# -- fracast's prefix-cached encoder on a context longer than the widest tap ---------------------


def test_prefix_encoder_matches_fracast_when_the_prefix_is_shorter_than_the_taps():
    """One context of 1,200 values leaves a padded prefix of 848 positions, shorter than the
    1,024 positions the widest dilation (512, kernel 3) reaches back: the prefix path pads its
    cached states on the left with zeros, as fracast's causal convolution does. Checked
    against fracast's own full-length encoder (forecast_batch of the unmodified model)."""
    pytest.importorskip("torch")
    pytest.importorskip("fracast")
    from tsrate.robustness.sources import load_skfolio_sp500
    from tsrate.systems.fracast_model import FracastSystem

    closes = load_skfolio_sp500(["AAPL"])["close"].to_numpy()
    contexts = closes[None, -1300:-100]
    system = FracastSystem(device="cpu", encoder="prefix")
    full = system.model.forecast_batch(contexts, horizon=5)
    ours = system.fast_model.forecast_batch(contexts, horizon=5)
    core = system.fast_model.core
    taps = (core.core.block.kernel - 1) * max(core.core.dilations())
    assert 2048 - contexts.shape[1] < taps  # the case under test
    np.testing.assert_allclose(ours, full, rtol=1e-6, atol=0)


def test_prefix_encoder_matches_fracast_on_a_period_longer_than_a_quarter_window():
    """fracast's periodogram looks for periods up to half its 2,048-step window. A context
    of 1,500 values with a 700-step cycle (longer than a quarter window) must give the prefix
    path the same periods, and so the same forecasts, as fracast's own full-length encoder."""
    pytest.importorskip("torch")
    pytest.importorskip("fracast")
    from tsrate.systems.fracast_model import FracastSystem

    t = np.arange(1500.0)
    noise = np.random.default_rng(2).normal(0.0, 0.2, t.size)
    contexts = (100.0 + 10.0 * np.sin(2 * np.pi * t / 700.0) + noise)[None, :]
    system = FracastSystem(device="cpu", encoder="prefix")
    full = system.model.forecast_batch(contexts, horizon=5)
    ours = system.fast_model.forecast_batch(contexts, horizon=5)
    np.testing.assert_allclose(ours, full, rtol=1e-6, atol=0)
