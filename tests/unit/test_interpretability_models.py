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
        assert attention.picks.shape == (N, N)
        assert set(np.unique(attention.picks)) <= {0, 1}
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


# --- attention that can peak, and that matters ---------------------------------------------


def _sole_driver_toy(length: int = 1500, lag: int = 1) -> np.ndarray:
    """Two series: X1 i.i.d. N(0, 1), X0_t = X1_{t-lag}. X1 is the sole driver of X0."""
    rng = np.random.default_rng(0)
    driver = rng.normal(size=length)
    follower = np.concatenate([np.zeros(lag), driver[:-lag]])
    return np.column_stack([follower, driver])


TOY = TrainSettings(
    window=W, test_length=200, hidden=8, epochs=3, batch_size=64, learning_rate=0.01
)


@pytest.mark.parametrize("model_id", ["imv_tensor", "imv_full"])
def test_imv_beta_exceeds_095_on_the_sole_driver(model_id):
    """Unbounded attention scores (the reference's score network): beta of the sole driver
    goes above 0.95 (a tanh-bounded score caps it at e / (e + 1/e) = 0.881 with 2 series)."""
    result = train_model(model_id, _sole_driver_toy(), TOY, seed=1)
    assert result.attention.beta[0, 1] > 0.95
    assert result.test_mse[0] < 0.05  # it forecasts X0 from X1


def _per_sample_max(model, x, kind: str) -> float:
    attention = model.explain(x[:1])
    values = attention.beta if kind == "beta" else attention.alpha
    return float(np.nanmax(values))


PEAK_PARAMETERS = {  # the parameters on the path from the input to each attention score
    "imv_tensor": {"beta": ["u", "f_beta", "f_beta_1"], "alpha": ["u", "f_alpha", "f_alpha_1"]},
    "imv_full": {"beta": ["u_j", "f_beta", "f_beta_1"], "alpha": ["u_j", "f_alpha", "f_alpha_1"]},
    "tcdf": {"beta": ["attention"]},
    "darnn": {"beta": ["in_u", "in_v"], "alpha": ["enc_w", "tmp_u", "tmp_v"]},
    "seq2graph": {"beta": ["summary.weight_ih_l0", "beta_v"], "alpha": ["alpha_v.weight"]},
}


@pytest.mark.parametrize(
    ("model_id", "kind"),
    [(m, k) for m, kinds in PEAK_PARAMETERS.items() for k in kinds],
)
def test_attention_can_become_peaked(model_id, kind, batch):
    """Scaling the parameters that feed the attention scores drives one sample's attention
    onto a single cell (> 0.95): nothing bounds the scores (a tanh-bounded score would cap
    it at e / (e + 2/e) = 0.79 over 3 series and e / (e + 9/e) = 0.45 over 10 lags)."""
    torch.manual_seed(3)
    model = build_model(model_id, N, hidden=4, window=W)
    with torch.no_grad():
        for name in PEAK_PARAMETERS[model_id][kind]:
            parameter = model.get_parameter(name)
            if model_id == "tcdf":
                parameter.copy_(torch.randn_like(parameter))
            parameter.mul_(100.0)
    attention = model.explain(batch[:1] * 3)
    values = attention.beta if kind == "beta" else attention.alpha
    assert np.nanmax(values) > 0.95, values


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_forcing_beta_uniform_worsens_the_sole_driver_forecast(model_id):
    """Trained on the toy, each model's forecast of X0 (on the training scale) gets clearly
    worse when its attention over the series is forced uniform: attention carries the
    forecast, so a model whose attention were ignored (or always uniform) would fail."""
    values = _sole_driver_toy()
    settings = TOY
    if model_id == "tcdf":
        settings = TrainSettings(window=W, test_length=200, epochs=200, batch_size=0)
    if model_id == "darnn":  # DA-RNN's input attention of X0 needs two candidates
        values = np.column_stack([values, np.random.default_rng(1).normal(size=len(values))])
    result = train_model(model_id, values, settings, seed=1, keep_model=True)
    model = result.model
    assert result.test_mse[0] < 0.7  # it learned (some of) X0 from X1 (variance 1)
    train = values[:-200]
    scaled = ((values - train.mean(0)) / train.std(0)).astype(np.float32)
    x, y = make_windows(scaled, W)
    x, y = torch.from_numpy(x[-200:]), torch.from_numpy(y[-200:])
    with torch.no_grad():
        learned_forecast = model(x)
        model.force_uniform = {"beta"}
        uniform_forecast = model(x)
    learned = float(((learned_forecast - y)[:, 0] ** 2).mean())
    uniform = float(((uniform_forecast - y)[:, 0] ** 2).mean())
    if model_id == "seq2graph":
        # its decoder GRU reads the series in order and can find X1 by position whatever
        # beta says: forcing beta uniform changes the forecast but need not worsen it
        assert float((learned_forecast - uniform_forecast).abs().max()) > 0.05
    else:
        assert uniform > 1.5 * learned + 0.05, (learned, uniform)


@pytest.mark.parametrize("model_id", ["imv_tensor", "imv_full", "darnn", "seq2graph"])
def test_forcing_alpha_uniform_changes_the_forecast(model_id):
    """Forcing the attention over time uniform changes the trained model's forecast (the
    driver acts at lag 6, so the last hidden state alone does not carry it)."""
    values = _sole_driver_toy(lag=6)
    result = train_model(model_id, values, TOY, seed=1, keep_model=True)
    x = torch.from_numpy(make_windows(values.astype(np.float32), W)[0][-100:])
    with torch.no_grad():
        learned = result.model(x)
        result.model.force_uniform = {"alpha"}
        uniform = result.model(x)
    assert float((learned - uniform).abs().max()) > 0.005


def test_tcdf_pivm_and_delay_discovery_on_the_sole_driver():
    """TCDF finds X1 as the cause of X0, PIVM keeps it, the kernels put X1's delay at lag 1
    (X0_t = X1_{t-1}), and the lag profile (alpha) peaks there."""
    values = _sole_driver_toy()
    settings = TrainSettings(window=W, test_length=200, epochs=300, batch_size=0)
    result = train_model("tcdf", values, settings, seed=1, keep_model=True)
    assert result.attention.picks[0].tolist() == [0, 1]
    assert result.model.delays()[0, 1] == 1
    assert int(np.argmax(result.attention.alpha[0, 1])) == 0  # lag 1
    # PIVM drops a potential cause whose shuffling does not hurt: make X0 a potential cause
    # of itself (attention above 1) and validate again
    model = result.model
    train = values[:-200]
    scaled = ((values - train.mean(0)) / train.std(0)).astype(np.float32)
    x, y = (torch.from_numpy(a) for a in make_windows(scaled, W))
    with torch.no_grad():
        model.attention[0, 0] = 1.5
    first = np.full(2, 2.0)  # the loss before training
    validated = model.validate(x[-1000:], y[-1000:], first, significance=0.8, seed=1)
    assert validated[0].tolist() == [0, 1]


def test_tcdf_layout_is_the_reference_one():
    """Kernel 4, dilation coefficient 4 (dilations 1 and 4), and a receptive field that
    covers the window: changing the input 9 steps back changes the forecast."""
    model = build_model("tcdf", 2, hidden=4, window=W)
    assert [c.kernel_size[0] for c in model.convs] == [4, 4]
    assert [c.dilation[0] for c in model.convs] == [1, 4]
    x = torch.zeros(1, W, 2)
    moved = x.clone()
    moved[0, 0, 1] = 1.0  # the oldest step of the window
    with torch.no_grad():
        assert not torch.allclose(model(x), model(moved))


def test_tcdf_causal_depthwise_equals_the_padded_grouped_convolution():
    """The shifted-sum depthwise convolution equals torch's grouped Conv1d on a left-padded
    input (the reference's Conv1d + Chomp1d), for both dilations of the layout."""
    from tsrate.suites.interpretability.models import _causal_depthwise

    torch.manual_seed(0)
    z = torch.randn(3, 6, W)
    for dilation in (1, 4):
        conv = torch.nn.Conv1d(6, 6, 4, dilation=dilation, groups=6)
        expected = conv(torch.nn.functional.pad(z, (3 * dilation, 0)))
        torch.testing.assert_close(_causal_depthwise(conv, z), expected)
