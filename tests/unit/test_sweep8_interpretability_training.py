"""The interpretability suite's training run (tsrate.suites.interpretability.training), where
round 6's loop-by-loop comparison (tests/unit/test_sweep6_interpretability_training.py) left
it free: the shared defaults a bare ``TrainSettings()`` trains with, and the torch thread
count while training (one thread by default, the caller's count with ``threads`` 0).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep8_interpretability.json). Tiny runs (a few dozen steps).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
import torch

from tsrate.suites.interpretability import training as tr


def series(length=40, n=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(length, n)).cumsum(0) + 5.0


def test_shared_defaults():
    """A bare TrainSettings: the paper's window 10 and 2,000 test steps, 8 hidden units and
    3 epochs (ours: a quick default), batch 128 (the papers' batch for IMV-LSTM, DA-RNN and
    seq2graph), Adam lr 0.01 (TCDF's), every training window, the CPU, one torch thread
    (the field's comment: tiny models run faster on one), PIVM significance 0.8."""
    assert dataclasses.asdict(tr.TrainSettings()) == {
        "window": 10,
        "test_length": 2000,
        "hidden": 8,
        "epochs": 3,
        "batch_size": 128,
        "learning_rate": 0.01,
        "max_train_windows": None,
        "device": "cpu",
        "threads": 1,
        "tcdf_significance": 0.8,
    }


@pytest.fixture
def thread_probe(monkeypatch):
    """Records torch's thread count at every forward pass of the model being trained."""
    seen: list[int] = []
    real_build = tr.build_model

    def build(*args, **kwargs):
        model = real_build(*args, **kwargs)
        model.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
        return model

    monkeypatch.setattr(tr, "build_model", build)
    return seen


@pytest.mark.parametrize(("threads", "expected"), [(None, 1), (2, 2), (0, 3)])
def test_training_runs_on_the_requested_threads(thread_probe, threads, expected):
    """Default: one thread; ``threads`` 2: two; 0: torch's count as the caller left it
    (here 3), not changed. The caller's count is restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        extra = {} if threads is None else {"threads": threads}
        settings = tr.TrainSettings(
            window=4, test_length=3, hidden=2, epochs=1, batch_size=0, **extra
        )
        tr.train_model("tcdf", series(length=12), settings, seed=0)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
    assert thread_probe and set(thread_probe) == {expected}


@pytest.fixture
def probe(monkeypatch):
    """Records, for the model being trained, every forward input (as float64 numpy) and
    the windows TCDF's PIVM sees (``per_target_loss`` and ``validate``)."""
    calls: dict[str, list] = {"forward": [], "loss": [], "validate": []}
    real_build = tr.build_model

    def build(*args, **kwargs):
        model = real_build(*args, **kwargs)
        model.register_forward_pre_hook(
            lambda _m, inputs: calls["forward"].append(inputs[0].detach().numpy().astype(float))
        )
        if hasattr(model, "validate"):
            loss, validate = model.per_target_loss, model.validate

            def per_target_loss(x, y, *a, **k):
                calls["loss"].append((x.numpy().copy(), y.numpy().copy()))
                return loss(x, y, *a, **k)

            def checked(x, y, *a, **k):
                calls["validate"].append((x.numpy().copy(), y.numpy().copy()))
                return validate(x, y, *a, **k)

            model.per_target_loss, model.validate = per_target_loss, checked
        return model

    monkeypatch.setattr(tr, "build_model", build)
    return calls


def loop_windows(values, window):
    x = np.stack([values[k : k + window] for k in range(len(values) - window)])
    y = np.stack([values[k + window] for k in range(len(values) - window)])
    return x, y


@pytest.mark.parametrize(("amplitude", "kept"), [(1e-12, True), (1.5e-12, False)])
def test_a_training_std_of_at_most_1e_12_counts_as_constant(probe, amplitude, kept):
    """Series 1's training part alternates -amplitude and +amplitude (64 steps, mean 0):
    its std is exactly 1e-12 for 1e-12 (not above 1e-12: the series keeps std 1, so the
    model sees v - mean, +-1e-12) and 1.5e-12 for 1.5e-12 (above: the model sees
    (v - mean) / std, +-1)."""
    values = series(length=70)
    values[:64, 1] = np.tile([-amplitude, amplitude], 32)
    train = values[:64]
    std = train.std(0)
    assert std[1] == pytest.approx(amplitude, rel=1e-12) and train.mean(0)[1] == 0.0
    assert (std[1] == 1e-12) == kept  # exactly at the bound, or clearly above it
    std[1] = 1.0 if kept else std[1]
    settings = tr.TrainSettings(window=4, test_length=6, hidden=2, epochs=1, batch_size=0)
    tr.train_model("tcdf", values, settings, seed=0)
    x, _ = loop_windows((values - train.mean(0)) / std, 4)
    first = probe["forward"][0]  # PIVM's loss before training: every training window
    np.testing.assert_allclose(first, x[:60], rtol=1e-6, atol=1e-18)
    assert np.abs(first[:, :, 1]).max() == pytest.approx(1e-12 if kept else 1.0, rel=1e-5)


def test_pivm_uses_the_latest_4096_training_windows(probe):
    """TCDF's loss before training and its validation run on the latest 4,096 training
    windows (the module docstring), here of 4,100."""
    length, window, test_length = 4110, 4, 6
    values = series(length=length)
    settings = tr.TrainSettings(
        window=window, test_length=test_length, hidden=2, epochs=1, batch_size=0
    )
    tr.train_model("tcdf", values, settings, seed=0)
    train = values[: length - test_length]
    x, y = loop_windows((values - train.mean(0)) / train.std(0), window)
    n_train = length - test_length - window
    assert n_train == 4100
    for key in ("loss", "validate"):
        seen_x, seen_y = probe[key][0]
        assert seen_x.shape == (4096, window, 2)
        np.testing.assert_allclose(seen_x, x[n_train - 4096 : n_train], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(seen_y, y[n_train - 4096 : n_train], rtol=1e-5, atol=1e-6)


def test_one_training_window_gives_its_loss_per_epoch():
    """max_train_windows 1: each epoch trains on one window; the epoch loss is that
    window's loss per series (the sum over targets divided by 2), not halved again."""
    values = series(length=20)
    settings = tr.TrainSettings(
        window=4, test_length=4, hidden=2, epochs=1, batch_size=0, max_train_windows=1
    )
    torch.manual_seed(5)
    model = tr.build_model("imv_tensor", 2, 2, 4)
    train = values[:16]
    x, y = loop_windows((values - train.mean(0)) / train.std(0), 4)
    xt = torch.from_numpy(x[11:12].astype(np.float32))
    yt = torch.from_numpy(y[11:12].astype(np.float32))
    with torch.no_grad():
        expected = float(((model(xt) - yt) ** 2).sum()) / 2
    result = tr.train_model("imv_tensor", values, settings, seed=5)
    assert result.loss_history == [pytest.approx(expected, rel=1e-5)]


def test_a_zero_test_length_is_refused_up_front():
    """No test step: refused by the length check with its message, before any training
    (not by a later failure on an empty test set)."""
    settings = tr.TrainSettings(window=4, test_length=0, hidden=2, epochs=1, batch_size=0)
    with pytest.raises(ValueError, match="too short for window 4 and test length 0"):
        tr.train_model("tcdf", series(length=30), settings, seed=0)


@pytest.mark.parametrize(("batch_size", "steps"), [(1, 12), (5, 3), (0, 1)])
def test_batch_size_sets_the_steps_per_epoch(probe, batch_size, steps):
    """12 training windows: batch 1 takes 12 optimiser steps an epoch (one window each),
    batch 5 three (5, 5, 2), batch 0 one (the whole training set). Counted as the
    model's forward calls while training (the two after it predict the training and the
    test windows; the attention is read without a forward call)."""
    settings = tr.TrainSettings(window=4, test_length=4, hidden=2, epochs=2, batch_size=batch_size)
    tr.train_model("imv_tensor", series(length=20), settings, seed=0)
    sizes = [len(x) for x in probe["forward"]]
    assert len(sizes) == 2 * steps + 2
    expected = {1: [1] * 12, 5: [5, 5, 2], 0: [12]}[batch_size]
    assert sizes[: 2 * steps] == expected * 2
    assert sizes[2 * steps :] == [12, 4]


def test_a_constant_training_part_keeps_std_1(probe):
    """Series 1 is constant (2.0) over its 16 training steps and moves in the test part:
    the model sees it as v - 2 (std 1). TCDF's first forward pass (PIVM's loss before
    training) holds every training window in order; the test windows are predicted last."""
    values = series(length=20)
    values[:16, 1] = 2.0
    settings = tr.TrainSettings(window=4, test_length=4, hidden=2, epochs=1, batch_size=0)
    result = tr.train_model("tcdf", values, settings, seed=0)
    train = values[:16]
    std = np.array([train[:, 0].std(), 1.0])
    x, _ = loop_windows((values - train.mean(0)) / std, 4)
    np.testing.assert_allclose(probe["forward"][0], x[:12], rtol=1e-6, atol=1e-7)
    test_inputs = [a for a in probe["forward"] if len(a) == 4][-1]
    raw = np.stack([values[12 + k : 16 + k, 1] for k in range(4)]) - 2.0
    np.testing.assert_allclose(test_inputs[:, :, 1], raw, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(result.test_targets, values[16:], rtol=1e-6)


def test_the_kept_model_is_left_out_of_the_result_repr():
    """``model`` is a field with repr=False: printing a result does not print the module."""
    result = tr.TrainResult(
        train_mse=np.zeros(1),
        test_mse=np.zeros(1),
        loss_history=[],
        test_targets=np.zeros((1, 1)),
        test_predictions=np.zeros((1, 1)),
        test_start=0,
        attention=None,
        seconds=0.0,
        model="THE-MODULE",
    )
    assert "THE-MODULE" not in repr(result) and "test_start=0" in repr(result)


def test_seconds_is_the_run_time():
    """``seconds``: the wall time of the run, within the time measured around the call."""
    settings = tr.TrainSettings(window=4, test_length=3, hidden=2, epochs=1, batch_size=0)
    start = time.perf_counter()
    result = tr.train_model("tcdf", series(length=12), settings, seed=0)
    elapsed = time.perf_counter() - start
    assert 0 < result.seconds <= elapsed
