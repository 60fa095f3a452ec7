"""fracast's adapter (tsrate.systems.fracast_model) around a scripted model whose every
quantile is known: which windows go to the model and which fall back to their last value
(at exactly fracast's own minimum of finite values), the median column and the quantile
columns matched by level, the batches the windows are sent in (by default 16 on a CPU and
512 on a GPU, chunk boundaries included), the encoder each setting picks, the fingerprint,
the availability messages and the scheduler's cost per window.

The real packaged model costs seconds a test (tests/unit/test_fracast.py loads it); the
arithmetic around it does not need it. Written for the mutation sweep
(tests/planted/mutate.py; its survivors are tests/planted/sweep6_foundation_models.json).
"""

from __future__ import annotations

import numpy as np
import pytest

from tsrate import TsrateError
from tsrate.config import Study
from tsrate.systems import fracast_model
from tsrate.systems.base import QUANTILE_LEVELS, ForecastBatch
from tsrate.systems.fracast_model import MIN_FINITE, FracastSystem

pytest.importorskip("torch")


class ScriptedModel:
    """fracast's ``forecast_batch`` interface: quantile ``level`` at step ``h`` of a row is
    ``last finite value + 100 * level + h``; each call's batch is recorded."""

    def __init__(self, quantiles=QUANTILE_LEVELS):
        self.quantiles = list(quantiles)
        self.calls: list[np.ndarray] = []

    def forecast_batch(self, context, *, horizon):
        context = np.asarray(context, dtype=float)
        self.calls.append(context.copy())
        last = np.array([row[np.isfinite(row)][-1] for row in context])
        levels = np.asarray(self.quantiles)
        steps = np.arange(horizon)
        return last[:, None, None] + 100 * levels[None, None, :] + steps[None, :, None]


def expected_quantiles(contexts: np.ndarray, horizon: int) -> np.ndarray:
    """The scripted model's quantiles at QUANTILE_LEVELS, written out."""
    out = np.empty((len(contexts), horizon, len(QUANTILE_LEVELS)))
    for i, row in enumerate(contexts):
        last = row[np.isfinite(row)][-1]
        for h in range(horizon):
            for j, level in enumerate(QUANTILE_LEVELS):
                out[i, h, j] = last + 100 * level + h
    return out


def scripted(encoder: str = "full", model=None, **kwargs) -> FracastSystem:
    system = FracastSystem(device="cpu", encoder=encoder, **kwargs)
    model = model or ScriptedModel()
    if encoder == "prefix":
        system._fast_model = model
    else:
        system._model = model
    return system


def make_batch(contexts: np.ndarray, horizon: int = 3) -> ForecastBatch:
    n = len(contexts)
    return ForecastBatch(
        "AAPL", "P0", np.arange(n), contexts, horizon, np.zeros((n, horizon)), (0.0, 1.0)
    )


def contexts_with_observed(counts: list[int], length: int = 20) -> np.ndarray:
    """Row i: ``length`` values, the first ``length - counts[i]`` missing, value = 10 i + t."""
    rows = np.full((len(counts), length), np.nan)
    for i, count in enumerate(counts):
        rows[i, length - count :] = 10.0 * i + np.arange(count)
    return rows


# -- which windows the model sees -----------------------------------------------------------------


def test_the_minimum_is_fracasts_own():
    from fracast.inference import _MIN_FINITE

    assert MIN_FINITE == _MIN_FINITE == 8


@pytest.mark.parametrize("encoder", ["full", "prefix"])
def test_windows_below_eight_finite_values_fall_back_to_their_last_value(encoder):
    contexts = contexts_with_observed([20, 7, 8, 9, 0, 1])
    contexts[3, -1] = np.nan  # 9 values, the last one missing: 8 finite, usable
    system = scripted(encoder)
    result = system.predict_quantiles(make_batch(contexts))
    model = system._fast_model if encoder == "prefix" else system._model
    # the model got rows 0, 2 and 3 (8 or more finite values), as one batch
    assert len(model.calls) == 1
    np.testing.assert_array_equal(model.calls[0], contexts[[0, 2, 3]])
    expected = expected_quantiles(contexts[[0, 2, 3]], 3)
    np.testing.assert_array_equal(result.quantiles[[0, 2, 3]], expected)
    np.testing.assert_array_equal(result.point[[0, 2, 3]], expected[:, :, 4])
    # the others: the last observed value, no quantiles; nothing observed: NaN
    assert system.fallbacks == 3
    np.testing.assert_array_equal(result.point[1], np.full(3, 10.0 + 6))
    np.testing.assert_array_equal(result.point[5], np.full(3, 50.0))
    assert np.isnan(result.point[4]).all()
    assert np.isnan(result.quantiles[[1, 4, 5]]).all()
    # predict is the median
    again = scripted(encoder)
    np.testing.assert_array_equal(again.predict(make_batch(contexts)), result.point)
    assert again.fallbacks == 3


def test_a_batch_with_no_usable_window_never_calls_the_model():
    system = scripted()
    result = system.predict_quantiles(make_batch(contexts_with_observed([3, 2])))
    assert system._model.calls == [] and system.fallbacks == 2
    np.testing.assert_array_equal(result.point, [[2.0] * 3, [11.0] * 3])


def test_the_quantile_columns_are_matched_by_level():
    """A model with other levels (0.05 … 0.95, 19 columns): the nine stored are those
    nearest 0.1 … 0.9, the point is the 0.5 column."""
    levels = [round(0.05 * k, 2) for k in range(1, 20)]
    system = scripted(model=ScriptedModel(levels))
    contexts = contexts_with_observed([12, 15])
    result = system.predict_quantiles(make_batch(contexts, horizon=2))
    np.testing.assert_allclose(result.quantiles, expected_quantiles(contexts, 2), atol=1e-9)
    np.testing.assert_allclose(result.point, expected_quantiles(contexts, 2)[:, :, 4], atol=1e-9)


def test_a_model_without_the_levels_is_refused():
    system = scripted(model=ScriptedModel([0.25, 0.5, 0.75]))
    with pytest.raises(TsrateError, match="do not include"):
        system.forecast_quantiles(contexts_with_observed([12]), 2)


def test_forecast_is_the_median_quantile():
    system = scripted()
    contexts = contexts_with_observed([10, 11])
    np.testing.assert_array_equal(
        system.forecast(contexts, 4), expected_quantiles(contexts, 4)[:, :, 4]
    )


# -- batches -----------------------------------------------------------------------------------


@pytest.mark.parametrize("size, chunks", [(None, [16, 16, 5]), (4, [4] * 9 + [1]), (37, [37])])
def test_windows_are_sent_in_batches_of_the_batch_size(size, chunks):
    contexts = contexts_with_observed([10 + i % 7 for i in range(37)])
    system = scripted(batch_size=size)
    out = system.forecast_quantiles(contexts, 2)
    assert [len(call) for call in system._model.calls] == chunks
    np.testing.assert_array_equal(np.concatenate(system._model.calls), contexts)
    np.testing.assert_array_equal(out, expected_quantiles(contexts, 2))


def test_default_batch_sizes():
    assert FracastSystem(device="cpu").batch_size == 16
    assert FracastSystem(device="cuda").batch_size == 512
    assert FracastSystem(device="cuda:1", batch_size=3).batch_size == 3


def test_batch_size_must_be_positive():
    with pytest.raises(TsrateError, match="at least 1"):
        FracastSystem(batch_size=0)
    assert FracastSystem(batch_size=1).batch_size == 1
    with pytest.raises(TsrateError, match="weights must be one of"):
        FracastSystem(weights="w4")
    assert FracastSystem(weights="fp32").weights == "fp32"
    with pytest.raises(TsrateError, match="encoder must be one of"):
        FracastSystem(encoder="fast")


# -- settings, fingerprint, availability ---------------------------------------------------------


def test_encoder_setting_resolves_and_marks_the_fingerprint(monkeypatch):
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.1.0")
    assert FracastSystem(encoder="auto").encoder == "prefix"
    assert FracastSystem(encoder="full").encoder == "full"
    assert FracastSystem(encoder="prefix").fingerprint() == (
        "fracast=0.1.0;weights=w8;point=median;encoder=prefix-cache"
    )
    assert FracastSystem(encoder="full", weights="fp32").fingerprint() == (
        "fracast=0.1.0;weights=fp32;point=median"
    )
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.2.0")
    assert FracastSystem(encoder="auto").encoder == "full"
    assert FracastSystem(encoder="prefix").encoder == "prefix"
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: None)
    assert FracastSystem(encoder="full").fingerprint().startswith("fracast=not-installed;")


def test_cost_per_window_orders_the_work_as_measured():
    """The scheduler's milliseconds per window (the module docstring: prefix about 8, the
    same as plan.SYSTEM_COST's fracast, below ARIMA's 15; fracast's full pass about 37)."""
    from tsrate.robustness.forecast.plan import SYSTEM_COST

    prefix = FracastSystem(encoder="prefix").ms_per_window
    full = FracastSystem(encoder="full").ms_per_window
    assert prefix == SYSTEM_COST["fracast"] == 8.0 < SYSTEM_COST["arima"]
    assert full == 37.0


def test_create_passes_the_device_and_encoder_settings(monkeypatch):
    study = Study.from_mapping(
        dict(study_tickers=["AAPL"], study_start="2022-01-03", study_end="2022-12-28")
    )
    monkeypatch.setenv("TSRATE_FRACAST_DEVICE", "cuda:1")
    monkeypatch.setenv("TSRATE_FRACAST_ENCODER", "full")
    system = fracast_model.create(study, None)
    assert (system.device, system.encoder, system.batch_size) == ("cuda:1", "full", 512)
    monkeypatch.setenv("TSRATE_FRACAST_DEVICE", "")
    monkeypatch.setenv("TSRATE_FRACAST_ENCODER", "")
    system = fracast_model.create(study, None)
    assert (system._device, system._encoder, system._batch_size) == (None, "auto", None)


def test_availability_names_what_is_missing(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.1.0")
    ok = FracastSystem(device="cpu").availability()
    assert ok.available and "fracast 0.1.0 (w8 weights, prefix encoder) on cpu" in ok.reason
    auto = FracastSystem().availability()
    assert auto.available and "cuda when torch sees a GPU" in auto.reason

    def without(name):
        return lambda spec, *args: None if spec == name else real(spec, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without("torch"))
    reason = FracastSystem(device="cpu").availability()
    assert not reason.available and reason.reason.startswith("torch is not installed")
    monkeypatch.setattr(importlib.util, "find_spec", without("fracast"))
    reason = FracastSystem(device="cpu").availability()
    assert not reason.available and reason.reason.startswith("fracast is not installed")


def test_the_prefix_encoder_needs_its_fracast_version(monkeypatch):
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.2.0")
    asked = FracastSystem(device="cpu", encoder="prefix").availability()
    assert not asked.available and "needs fracast 0.1.0, found 0.2.0" in asked.reason
    for encoder in ("auto", "full"):
        other = FracastSystem(device="cpu", encoder=encoder).availability()
        assert other.available and "full encoder" in other.reason
    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.1.0")
    assert FracastSystem(device="cpu", encoder="prefix").availability().available


def test_a_cuda_device_without_a_gpu_is_unavailable(monkeypatch):
    import torch

    monkeypatch.setattr(fracast_model, "_fracast_version", lambda: "0.1.0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    reason = FracastSystem(device="cuda").availability()
    assert not reason.available and "torch sees no CUDA GPU" in reason.reason
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    reason = FracastSystem(device="cuda").availability()
    assert reason.available and "on cuda" in reason.reason


@pytest.mark.parametrize("encoder", ["prefix", "full"])
def test_warm_up_builds_the_model_of_the_encoder(monkeypatch, encoder):
    system = FracastSystem(device="cpu", encoder=encoder)
    built = []
    monkeypatch.setattr(
        FracastSystem, "model", property(lambda self: built.append("model") or ScriptedModel())
    )
    monkeypatch.setattr(
        FracastSystem, "fast_model", property(lambda self: built.append("fast") or ScriptedModel())
    )
    system.warm_up()
    assert built == (["fast"] if encoder == "prefix" else ["model"])
