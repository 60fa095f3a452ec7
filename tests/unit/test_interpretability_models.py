"""Attention models of the interpretability suite: shapes, attention normalisation,
training reduces the loss, determinism by seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tsrate.suites.interpretability.datasets import dataset4
from tsrate.suites.interpretability.models import MODEL_IDS, build_model, semi_binarise
from tsrate.suites.interpretability.training import TrainSettings, make_windows, train_model

N, W = 3, 10


@pytest.fixture(scope="module")
def batch() -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(0).normal(size=(7, W, N)).astype(np.float32))


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_outputs_and_attention_shapes_and_normalisation(model_id, batch):
    torch.manual_seed(0)
    model = build_model(model_id, N, hidden=4, window=W)
    assert model(batch).shape == (7, N)
    attention = model.explain(batch)
    assert attention.beta.shape == (N, N)
    np.testing.assert_allclose(attention.beta.sum(axis=1), 1.0, rtol=1e-5)
    assert (attention.beta >= 0).all()
    if model_id == "darnn":
        np.testing.assert_allclose(np.diag(attention.beta), 0.0)  # the target is not a driver
        assert attention.alpha.shape == (N, 1, W) and attention.alpha_sources == "encoder"
    if model_id == "tcdf":
        assert attention.alpha is None
        assert attention.picks.shape == (N, N)
        assert set(np.unique(attention.picks)) <= {0, 1}
    else:
        assert attention.alpha.shape[0] == N and attention.alpha.shape[-1] == W
        np.testing.assert_allclose(attention.alpha.sum(axis=-1), 1.0, rtol=1e-5)


def test_targets_are_independent_models(batch):
    """Target i's forecast does not change when another target's parameters change."""
    torch.manual_seed(0)
    model = build_model("imv_tensor", N, hidden=4, window=W)
    before = model(batch).detach()
    with torch.no_grad():
        model.phi[1].add_(1.0)  # parameters of target 1 only
    after = model(batch).detach()
    torch.testing.assert_close(after[:, [0, 2]], before[:, [0, 2]])
    assert not torch.allclose(after[:, 1], before[:, 1])


def test_make_windows_aligns_inputs_with_the_next_step():
    values = np.arange(30, dtype=float).reshape(15, 2)
    inputs, targets = make_windows(values, 4)
    assert inputs.shape == (11, 4, 2) and targets.shape == (11, 2)
    np.testing.assert_array_equal(inputs[0, :, 0], [0, 2, 4, 6])
    np.testing.assert_array_equal(targets[0], [8, 9])


SETTINGS = TrainSettings(window=W, test_length=40, hidden=3, epochs=3, batch_size=64)


@pytest.mark.parametrize("model_id", ["imv_full", "imv_tensor", "tcdf", "darnn", "seq2graph"])
def test_training_reduces_loss_and_is_deterministic_by_seed(model_id):
    values = dataset4(length=300, burn_in=20, seed=1).values
    first = train_model(model_id, values, SETTINGS, seed=7)
    again = train_model(model_id, values, SETTINGS, seed=7)
    assert first.loss_history[-1] < first.loss_history[0]
    np.testing.assert_array_equal(first.test_predictions, again.test_predictions)
    np.testing.assert_array_equal(first.attention.beta, again.attention.beta)
    assert first.test_predictions.shape == (40, 2) and first.test_mse.shape == (2,)
    other = train_model(model_id, values, SETTINGS, seed=8)
    assert not np.array_equal(first.test_predictions, other.test_predictions)


def test_too_short_series_and_non_finite_values_are_refused():
    with pytest.raises(ValueError, match="too short"):
        train_model("tcdf", np.zeros((40, 2)), SETTINGS, seed=1)
    bad = np.zeros((200, 2))
    bad[5, 1] = np.inf
    with pytest.raises(ValueError, match="non-finite"):
        train_model("tcdf", bad, SETTINGS, seed=1)
    with pytest.raises(ValueError, match="unknown model"):
        build_model("lstm", 2, 4, 10)
    with pytest.raises(ValueError, match="at least 2 series"):
        build_model("darnn", 1, 4, 10)


def test_semi_binarise_follows_tcdf():
    # <= 5 series: every score above 1 is a cause
    np.testing.assert_array_equal(semi_binarise(np.array([1.5, 0.9, 1.01, 1.0])), [1, 0, 1, 0])
    # more series: cut at the largest gap (not the first) in the first half among scores >= 1
    scores = np.array([2.0, 1.9, 1.2, 1.1, 1.05, 0.5, 0.4, 0.3])
    np.testing.assert_array_equal(semi_binarise(scores), [1, 1, 0, 0, 0, 0, 0, 0])
    # nothing grew above 1: no cause
    assert semi_binarise(np.full(8, 0.9)).sum() == 0
