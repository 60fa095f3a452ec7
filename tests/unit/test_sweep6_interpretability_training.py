"""The interpretability suite's training run (tsrate.suites.interpretability.training)
against a training loop written here from the module's documented conventions: windows of
the last ``window`` values forecasting the next step (built with an index loop), the last
``test_length`` targets as the test set, standardisation by the training part (a constant
series keeps std 1), torch seeded before the model is built, Adam, mini-batches from a
generator seeded with the seed (``batch_size`` 0 = full batch), the loss as the sum over
targets of each target's MSE, the epoch loss per series and sample, TCDF's PIVM on the
latest training windows against its loss before training, errors on the original scale,
attention averaged over the test windows.

Also: the per-model settings typed from docs/suites/interpretability.md's table, the
length checks at their bounds, and the device choice.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_interpretability.json). Tiny runs (a few dozen steps, 2 epochs).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tsrate.suites.interpretability import training as tr
from tsrate.suites.interpretability.models import build_model


def series(length=40, n=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(length, n)).cumsum(0) * np.array([1.0, 3.0])[:n] + 5.0


def windows_by_loop(values, window):
    inputs = np.stack([values[k : k + window] for k in range(len(values) - window)])
    targets = np.stack([values[k + window] for k in range(len(values) - window)])
    return inputs.astype(np.float32), targets.astype(np.float32)


def reference_run(model_id, values, settings, seed):
    """The documented training run, step by step, on the product's torch thread count (a
    different count may sum in another order)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(settings.threads or previous)
    try:
        return _reference_run(model_id, values, settings, seed)
    finally:
        torch.set_num_threads(previous)


def _reference_run(model_id, values, settings, seed):
    values = np.asarray(values, dtype=float)
    length, n = values.shape
    test_start = length - settings.test_length
    train = values[:test_start]
    mean = train.mean(0)
    std = np.array([s if s > 1e-12 else 1.0 for s in train.std(0)])
    x, y = windows_by_loop((values - mean) / std, settings.window)
    n_train = test_start - settings.window  # windows whose target is a training step
    x_train, y_train, x_test, y_test = x[:n_train], y[:n_train], x[n_train:], y[n_train:]
    if settings.max_train_windows is not None:
        x_train, y_train = (
            x_train[-settings.max_train_windows :],
            y_train[-settings.max_train_windows :],
        )
    torch.manual_seed(seed)
    model = build_model(model_id, n, settings.hidden, settings.window)
    optimiser = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    generator = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    if model_id == "tcdf":
        before = ((model(xt[-4096:]) - yt[-4096:]) ** 2).mean(0).detach().numpy()
    size = settings.batch_size or len(xt)
    history = []
    model.train()
    for _ in range(settings.epochs):
        order = torch.randperm(len(xt), generator=generator)
        seen, total = 0, 0.0
        for start in range(0, len(xt), size):
            batch = order[start : start + size]
            optimiser.zero_grad()
            errors = (model(xt[batch]) - yt[batch]) ** 2
            loss = sum(errors[:, i].mean() for i in range(n))
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(batch) / n
            seen += len(batch)
        history.append(total / seen)
    model.eval()
    if model_id == "tcdf":
        model.validate(xt[-4096:], yt[-4096:], before, settings.tcdf_significance, seed)
    with torch.no_grad():
        train_pred = model(xt).numpy().astype(float) * std + mean
        test_pred = model(torch.from_numpy(x_test)).numpy().astype(float) * std + mean
        attention = model.explain(torch.from_numpy(x_test))
    y_train_o = y_train.astype(float) * std + mean
    y_test_o = y_test.astype(float) * std + mean
    return {
        "history": history,
        "train_mse": ((train_pred - y_train_o) ** 2).mean(0),
        "test_mse": ((test_pred - y_test_o) ** 2).mean(0),
        "targets": y_test_o,
        "predictions": test_pred,
        "test_start": test_start,
        "attention": attention,
    }


def assert_same(result, expected):
    np.testing.assert_allclose(result.loss_history, expected["history"], rtol=1e-5)
    np.testing.assert_allclose(result.train_mse, expected["train_mse"], rtol=1e-5)
    np.testing.assert_allclose(result.test_mse, expected["test_mse"], rtol=1e-5)
    np.testing.assert_allclose(result.test_targets, expected["targets"], rtol=1e-6)
    np.testing.assert_allclose(result.test_predictions, expected["predictions"], rtol=1e-5)
    assert result.test_start == expected["test_start"]
    att = expected["attention"]
    np.testing.assert_allclose(result.attention.beta, att.beta, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(result.attention.alpha, att.alpha, rtol=1e-5, atol=1e-7)
    assert result.attention.alpha_sources == att.alpha_sources
    if att.picks is None:
        assert result.attention.picks is None
    else:
        assert result.attention.picks.tolist() == att.picks.tolist()


@pytest.mark.parametrize(
    ("model_id", "extra"),
    [
        ("tcdf", dict(batch_size=0)),
        ("tcdf", dict(batch_size=7, max_train_windows=20)),
        ("imv_tensor", dict(batch_size=6)),
        ("darnn", dict(batch_size=30, learning_rate=0.05)),
    ],
)
def test_training_run_matches_the_documented_loop(model_id, extra):
    values = series()
    values[:, 1] = np.where(np.arange(40) < 30, 2.0, values[:, 1])  # flat for 30 of 34 steps
    settings = tr.TrainSettings(window=4, test_length=6, hidden=2, epochs=2, **extra)
    result = tr.train_model(model_id, values, settings, seed=3, keep_model=True)
    assert_same(result, reference_run(model_id, values, settings, seed=3))
    assert result.model is not None
    assert tr.train_model(model_id, values, settings, seed=3).model is None


def test_explain_averages_over_every_test_window_in_chunks():
    """More than 1,024 test windows: the attention is the mean over all of them (chunk
    means weighted by chunk size), as one explain over every window gives."""
    values = series(length=1045)
    settings = tr.TrainSettings(window=4, test_length=1030, hidden=2, epochs=1, batch_size=0)
    result = tr.train_model("imv_tensor", values, settings, seed=1)
    expected = reference_run("imv_tensor", values, settings, seed=1)
    assert_same(result, expected)


def test_make_windows_by_loop_and_bounds():
    values = np.random.default_rng(2).normal(size=(9, 3))
    inputs, targets = tr.make_windows(values, 4)
    expected_x, expected_y = windows_by_loop(values, 4)
    np.testing.assert_array_equal(inputs, expected_x)
    np.testing.assert_array_equal(targets, expected_y)
    one_x, one_y = tr.make_windows(values[:5], 4)  # length window + 1: one window
    assert one_x.shape == (1, 4, 3) and one_y.shape == (1, 3)
    with pytest.raises(ValueError):
        tr.make_windows(values[:4], 4)
    with pytest.raises(ValueError):
        tr.make_windows(values[:, 0], 4)


def test_length_checks_at_their_bounds():
    settings = tr.TrainSettings(window=4, test_length=3, hidden=2, epochs=1, batch_size=0)
    # length - test_length must exceed window + 1: 9 - 3 = 6 > 5 trains, 8 - 3 = 5 does not
    assert tr.train_model("tcdf", series(length=9), settings, seed=0).test_start == 6
    with pytest.raises(ValueError):
        tr.train_model("tcdf", series(length=8), settings, seed=0)
    one = tr.TrainSettings(window=4, test_length=1, hidden=2, epochs=1, batch_size=0)
    assert tr.train_model("tcdf", series(length=9), one, seed=0).test_mse.shape == (2,)
    with pytest.raises(ValueError):
        tr.train_model("tcdf", series(length=9), tr.TrainSettings(window=4, test_length=0), seed=0)
    bad = series(length=9)
    bad[2, 1] = np.nan
    with pytest.raises(ValueError):
        tr.train_model("tcdf", bad, settings, seed=0)


def test_threads_are_restored_after_training():
    before = torch.get_num_threads()
    settings = tr.TrainSettings(
        window=4, test_length=3, hidden=2, epochs=1, batch_size=0, threads=1
    )
    tr.train_model("tcdf", series(length=12), settings, seed=0)
    assert torch.get_num_threads() == before


def test_pick_device():
    assert tr.pick_device("cpu") == "cpu"
    assert tr.pick_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    assert tr.pick_device() == tr.pick_device("auto")


def test_model_settings_are_the_documented_table():
    """docs/suites/interpretability.md, per-model settings: IMV-LSTM 128 units, lr 0.001,
    batch 128; TCDF lr 0.01, full batch, 1,000 epochs (small: 100); DA-RNN 64 units,
    lr 0.001, batch 128; seq2graph lr 0.01/3, batch 128, 5 epochs (both configurations)."""
    paper = tr.MODEL_SETTINGS["paper"]
    for imv in ("imv_full", "imv_tensor"):
        assert paper[imv] == {"hidden": 128, "learning_rate": 0.001, "batch_size": 128}
    assert paper["tcdf"] == {"learning_rate": 0.01, "batch_size": 0, "epochs": 1000}
    assert paper["darnn"] == {"hidden": 64, "learning_rate": 0.001, "batch_size": 128}
    s2g = {"learning_rate": 0.01 / 3, "batch_size": 128, "epochs": 5}
    assert paper["seq2graph"] == s2g and tr.MODEL_SETTINGS["small"]["seq2graph"] == s2g
    assert tr.MODEL_SETTINGS["small"]["tcdf"] == {
        "learning_rate": 0.01,
        "batch_size": 0,
        "epochs": 100,
    }
    shared = {"hidden": 4, "epochs": 4, "learning_rate": 0.01, "batch_size": 64}
    assert tr.model_settings("tcdf", shared, "small") == {**shared, "batch_size": 0, "epochs": 100}
    kept = tr.model_settings("tcdf", shared, "small", keep=("epochs",))
    assert kept == {**shared, "batch_size": 0}
    assert tr.model_settings("darnn", shared, "small") == shared
    assert tr.model_settings("darnn", shared, "unknown") == shared


def test_paper_defaults():
    """Window 10 and 2,000 test steps (paper Section 3.2); PIVM significance 0.8 (TCDF)."""
    settings = tr.TrainSettings()
    assert (settings.window, settings.test_length, settings.tcdf_significance) == (10, 2000, 0.8)
    assert settings.max_train_windows is None and settings.device == "cpu"
