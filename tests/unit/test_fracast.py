"""The fracast foundation model on real AAPL windows (skipped where fracast is not installed)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.support.forecast_batch import closes, series_batch
from tsrate import TsrateError
from tsrate.config import Study
from tsrate.inputs.windows import window_end_positions
from tsrate.systems import fracast_model
from tsrate.systems.base import check_forecasts
from tsrate.systems.fracast_model import FracastSystem

N, D, WINDOWS = 80, 20, 6


@pytest.fixture(scope="module")
def aapl():
    return closes("AAPL", "2022-06-01")


@pytest.fixture(scope="module")
def system():
    pytest.importorskip("torch")
    pytest.importorskip("fracast")
    return FracastSystem(device="cpu")


def batch(values, perturbation="P0", windows=WINDOWS):
    # phase n-1: the perturbed value is the last input of the first window (the hardest spot)
    return series_batch(values, perturbation, N, D, windows, phase=N - 1)


def test_shape_finite_and_plausible(system, aapl):
    b = batch(aapl)
    out = check_forecasts("fracast", b, system.predict(b))
    assert out.shape == (WINDOWS, D)
    last = b.contexts[:, -1:]
    # a 20-day AAPL forecast stays within ±25 % of the last price
    assert np.all(np.abs(out / last - 1) < 0.25)
    # and it is a forecast, not a copy of the last value
    assert np.abs(out - last).max() > 1e-3
    assert system.fallbacks == 0


def test_point_forecast_is_the_median(system, aapl):
    b = batch(aapl)
    quantiles = system.model.forecast_batch(b.contexts, horizon=D)  # (windows, steps, 9)
    assert system.model.quantiles[4] == 0.5
    np.testing.assert_allclose(system.predict(b), quantiles[:, :, 4])
    assert np.all(quantiles[:, :, 0] < quantiles[:, :, 8])


def test_deterministic_and_independent_of_batch_size(system, aapl):
    b = batch(aapl)
    first = system.predict(b)
    np.testing.assert_array_equal(first, system.predict(b))
    chunked = FracastSystem(device="cpu", batch_size=4).predict(b)  # chunks of 4 + 2
    np.testing.assert_allclose(chunked, first, rtol=1e-6)


def test_reacts_to_drop_to_zero(system, aapl):
    clean = system.predict(batch(aapl, "P0"))
    dropped = system.predict(batch(aapl, "P1"))
    assert np.abs(clean[0] - dropped[0]).max() > 1e-3


def test_missing_value_passes_through_as_nan(system, aapl):
    b = batch(aapl, "P3")
    assert np.isnan(b.contexts[0, -1]) and np.isnan(b.contexts).sum() == WINDOWS
    before = b.contexts.copy()
    out = check_forecasts("fracast", b, system.predict(b))
    np.testing.assert_array_equal(b.contexts, before)  # inputs untouched
    clean_last = batch(aapl).contexts[:, -1:]
    assert np.all(np.abs(out / clean_last - 1) < 0.25)
    assert system.fallbacks == 0


def test_too_few_observed_values_fall_back_to_last_value(aapl):
    pytest.importorskip("fracast")
    system = FracastSystem(device="cpu")
    b = batch(aapl)
    b.contexts[1, :-5] = np.nan  # 5 observed values: fracast needs 8
    out = system.predict(b)
    assert system.fallbacks == 1
    np.testing.assert_array_equal(out[1], b.contexts[1, -1])
    assert np.all(np.isfinite(out))


def test_unavailable_without_fracast(monkeypatch):
    monkeypatch.setitem(sys.modules, "fracast", None)
    availability = FracastSystem(device="cpu").availability()
    assert not availability.available
    assert "fracast is not installed" in availability.reason
    assert "pip install fracast" in availability.reason
    assert "torch==2.13.0" in availability.reason


def test_unavailable_without_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    availability = FracastSystem(device="cpu").availability()
    assert not availability.available
    assert "torch is not installed" in availability.reason


def test_create_reads_settings(monkeypatch):
    study = Study.from_mapping(
        dict(study_tickers=["AAPL"], study_start="2022-01-03", study_end="2022-12-28")
    )
    monkeypatch.setenv("TSRATE_FRACAST_BATCH_SIZE", "7")
    monkeypatch.setenv("TSRATE_FRACAST_DEVICE", "cpu")
    system = fracast_model.create(study, None)
    assert (system.system_id, system.batch_size, system.device) == ("fracast", 7, "cpu")
    assert "weights=w8" in system.fingerprint()
    monkeypatch.setenv("TSRATE_FRACAST_BATCH_SIZE", "many")
    with pytest.raises(TsrateError, match="TSRATE_FRACAST_BATCH_SIZE"):
        fracast_model.create(study, None)


# -- the prefix-cached encoder (tsrate.systems.fracast_prefix) ---------------------------------

#: the stated tolerance of the prefix path against fracast's own full-length encoder: every
#: quantile within 1e-6 relative (float32 rounding; measured 0 on the default study)
PREFIX_RTOL = 1e-6


@pytest.mark.parametrize("perturbation", ["P0", "P3"])
def test_prefix_encoder_matches_fracast_full_pass(aapl, perturbation):
    pytest.importorskip("fracast")
    fast = FracastSystem(device="cpu", encoder="prefix")
    b = batch(aapl, perturbation, windows=12)
    if perturbation == "P3":
        b.contexts[1, :3] = np.nan  # a window that starts unobserved: a longer prefix
    # independent: fracast's own forecast_batch over the full 2048-step context
    full = fast.model.forecast_batch(b.contexts, horizon=D)
    ours = fast.fast_model.forecast_batch(b.contexts, horizon=D)
    np.testing.assert_allclose(ours, full, rtol=PREFIX_RTOL, atol=0)
    core = fast.fast_model.core
    # the padding's states were computed once per set of detected periods, not per window
    computed = core.computed
    assert 1 <= computed < 12
    np.testing.assert_allclose(fast.predict(b), full[:, :, 4], rtol=PREFIX_RTOL, atol=0)
    assert core.computed == computed and core.reused >= computed  # then served from the cache


def test_prefix_encoder_matches_past_the_native_block(aapl):
    """A 60-step horizon rolls forward on 128-value contexts: another prefix length."""
    pytest.importorskip("fracast")
    fast = FracastSystem(device="cpu", encoder="prefix")
    contexts = batch(aapl, windows=3).contexts
    full = fast.model.forecast_batch(contexts, horizon=60)
    np.testing.assert_allclose(
        fast.fast_model.forecast_batch(contexts, horizon=60), full, rtol=PREFIX_RTOL, atol=0
    )
    assert {key[0] for key in fast.fast_model.core._cache} == {2048 - 80, 2048 - 128}


def test_encoder_setting_and_fingerprint(monkeypatch):
    study = Study.from_mapping(
        dict(study_tickers=["AAPL"], study_start="2022-01-03", study_end="2022-12-28")
    )
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.1.0")
    auto = fracast_model.create(study, None)
    assert auto.encoder == "prefix"
    assert auto.fingerprint() == "fracast=0.1.0;weights=w8;point=median;encoder=prefix-cache"
    monkeypatch.setenv("TSRATE_FRACAST_ENCODER", "full")
    full = fracast_model.create(study, None)
    # the full path keeps the fingerprint of the forecasts stored before the prefix path
    assert full.encoder == "full"
    assert full.fingerprint() == "fracast=0.1.0;weights=w8;point=median"
    monkeypatch.setenv("TSRATE_FRACAST_ENCODER", "fast")
    with pytest.raises(TsrateError, match="TSRATE_FRACAST_ENCODER"):
        fracast_model.create(study, None)


def test_unsupported_fracast_version_uses_the_full_encoder(monkeypatch):
    pytest.importorskip("fracast")
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.2.0")
    auto = FracastSystem(device="cpu")
    assert auto.encoder == "full" and "encoder=" not in auto.fingerprint()
    asked = FracastSystem(device="cpu", encoder="prefix").availability()
    assert not asked.available
    assert "needs fracast 0.1.0" in asked.reason and "found" in asked.reason


def test_prefix_encoder_refuses_a_model_it_does_not_reproduce():
    pytest.importorskip("fracast")
    system = FracastSystem(device="cpu", encoder="prefix")
    system.model.core.block.int8_dynamic_act = True  # a w8a8 model: per-tensor activations
    with pytest.raises(TsrateError, match="TSRATE_FRACAST_ENCODER=full"):
        system.fast_model  # noqa: B018 - the property builds it


def test_encoder_reaches_the_partition_keys(monkeypatch, aapl):
    """Forecasts of the two encoders never share a stored partition (input_key)."""
    from tsrate.robustness.forecast.plan import TickerSeries, input_key

    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.1.0")
    study = Study.from_mapping(
        dict(study_tickers=["AAPL"], study_start="2022-06-01", study_end="2024-12-31")
    )
    dates = np.arange(len(aapl)).astype("datetime64[D]")
    series = TickerSeries("AAPL", dates, aapl, window_end_positions(len(aapl), N, D))
    keys = {
        encoder: input_key(
            "fracast", FracastSystem(encoder=encoder).fingerprint(), study, series, "P0"
        )
        for encoder in ("auto", "prefix", "full")
    }
    assert keys["auto"] == keys["prefix"] != keys["full"]


@pytest.mark.parametrize("encoder", ["prefix", "full"])
def test_warm_up_loads_the_model_its_forecasts_use(encoder, aapl):
    """A worker warms the system up before its timed forecasts: the model (with the prefix
    encoder, the prefix-cached one) is loaded then, and the forecasts use that very model."""
    pytest.importorskip("fracast")
    system = FracastSystem(device="cpu", encoder=encoder)
    system.warm_up()
    loaded = system._fast_model if encoder == "prefix" else system._model
    assert loaded is not None
    assert (system._fast_model is None) == (encoder == "full")
    system.predict(batch(aapl, windows=2))
    assert (system._fast_model if encoder == "prefix" else system._model) is loaded
