"""The interpretability suite's attention models (tsrate.suites.interpretability.models)
recomputed by hand: a plain numpy forward pass, one target and one sample at a time, written
from each architecture's description in the module (IMV-LSTM's per-variable LSTMs and
mixture attention, TCDF's attention-scaled depthwise causal convolutions, DA-RNN's input and
temporal attention, seq2graph's series-as-sequence decoder), reading the model's own
parameters. Forecasts, alpha and beta must match to rounding (the models run in float64).

Also from their definitions: the parameter initialisations (uniform bound 1/sqrt(fan_in),
N(0, 0.02^2), TCDF's N(0, 0.1^2) kernels), TCDF's lag profile (every pair of taps enumerated),
its discovered delays (largest |weight| per level, 0 on a tie), PIVM's keep rule on losses
chosen around its threshold, and the per-target loss in batches.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_interpretability.json): a changed gate, sign, axis, lag flip, bound or
comparison in the models changes a checked number. Tiny models (2-3 series, hidden 3,
window 5-10, a few samples): no training, well under a second.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from tsrate.suites.interpretability import models as mod

W = 6


def npy(t):
    return t.detach().cpu().numpy().astype(np.float64)


def sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def softmax(v):
    v = np.asarray(v, dtype=float)
    e = np.exp(v - v.max())
    return e / e.sum()


def lstm(gates, c):
    """i, f, g, o split of the pre-activations (the standard LSTM)."""
    i, f, g, o = np.split(gates, 4)
    c = sig(f) * c + sig(i) * np.tanh(g)
    return sig(o) * np.tanh(c), c


def sample(n, window=W, batch=4, seed=0):  # batch, window, series all differ
    return torch.from_numpy(np.random.default_rng(seed).normal(size=(batch, window, n)))


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-11)


# ---------------------------------------------------------------- initialisation


def test_param_bound_is_one_over_sqrt_fan_in():
    torch.manual_seed(0)
    p = npy(mod._param(30, 400, 50))  # fan in = the second-to-last size, 400
    assert np.abs(p).max() <= 0.05 and np.abs(p).max() > 0.0499
    p = npy(mod._param(400, 4))  # 2-D: fan in 400 (not the last size)
    assert np.abs(p).max() <= 0.05 and np.abs(p).max() > 0.0499
    p = npy(mod._param(4))  # 1-D: fan in = its size
    assert np.abs(p).max() <= 0.5
    p = npy(mod._param(2000, 1, 30))  # fan in 1: bound 1
    assert np.abs(p).max() <= 1.0 and np.abs(p).max() > 0.99
    assert mod._param(2, 0, 3).numel() == 0  # fan in 0 counts as 1
    p = npy(mod._param(50, 40, 40, scale=0.3))
    assert np.abs(p).max() <= 0.3 and np.abs(p).max() > 0.299


def test_normal_init_std_and_uniform_like():
    torch.manual_seed(0)
    p = npy(mod._normal(300, 300))
    assert p.std() == pytest.approx(0.02, rel=0.02) and abs(p.mean()) < 1e-3
    assert npy(mod._normal(300, 300, std=0.5)).std() == pytest.approx(0.5, rel=0.02)
    w = torch.zeros(2, 3, 5, dtype=torch.float64)
    close(npy(mod._uniform_like(w, -1)), np.full((2, 3, 5), 0.2))
    close(npy(mod._uniform_like(w, 1)), np.full((2, 3, 5), 1 / 3))


def test_tcdf_initialisation_is_the_references():
    torch.manual_seed(0)
    model = mod.TCDF(20, 10, levels=3)
    assert npy(model.attention).tolist() == np.ones((20, 20)).tolist()
    for conv in model.convs[:-1]:  # first and middle levels: N(0, 0.1^2)
        assert npy(conv.weight).std() == pytest.approx(0.1, rel=0.05)
        assert abs(npy(conv.weight).mean()) < 0.01
    # the last level keeps torch's default uniform(+-1/sqrt(kernel)), std 0.5/sqrt(3)
    assert npy(model.convs[-1].weight).std() == pytest.approx(0.5 / math.sqrt(3), rel=0.05)
    assert npy(model.last_linear).std() == pytest.approx(0.01, rel=0.05)
    assert [c.dilation[0] for c in model.convs] == [1, 4, 16]
    one = mod.TCDF(20, 10, levels=1)
    assert npy(one.convs[0].weight).std() == pytest.approx(0.1, rel=0.05)
    assert abs(npy(one.convs[0].weight).mean()) < 0.01
    assert one.last_linear is None
    assert (npy(model.validated) == -1).all()


def test_build_model_layouts():
    tcdf = mod.build_model("tcdf", 3, hidden=4, window=10)
    assert tcdf.levels == mod.TCDF_LEVELS == 2 and tcdf.kernel == 4 and tcdf.dilation_c == 4
    assert mod.build_model("imv_full", 3, 4, 10).full
    default = mod.TCDF(2, 10)  # the module's layout: TCDF_LEVELS levels, kernel 4, dilation 4
    assert (default.levels, default.kernel, default.dilation_c) == (mod.TCDF_LEVELS, 4, 4)
    assert len(default.convs) == 2
    assert not mod.IMVLSTM(2, 2).full and not hasattr(mod.IMVLSTM(2, 2), "w_j")  # tensor
    assert not mod.build_model("imv_tensor", 3, 4, 10).full
    with pytest.raises(ValueError):
        mod.build_model("nope", 3, 4, 10)
    with pytest.raises(ValueError):
        mod.DARNN(1, 4, 10)
    assert mod.DARNN(2, 3, 5).n == 2


@pytest.mark.parametrize("hidden", [1, 2, 5, 8])
def test_lstm_step_splits_gates_in_four_equal_parts(hidden):
    gates = torch.from_numpy(np.random.default_rng(hidden).normal(size=(3, 4 * hidden)))
    c = torch.from_numpy(np.random.default_rng(9).normal(size=(3, hidden)))
    h, new_c = mod._lstm_step(gates, c)
    for row in range(3):
        expected_h, expected_c = lstm(npy(gates[row]), npy(c[row]))
        close(npy(h[row]), expected_h)
        close(npy(new_c[row]), expected_c)


# ---------------------------------------------------------------- IMV-LSTM


def imv_reference(model, x, force=()):
    """Per target e, per sample: y, alpha (W x N), beta (N)."""
    p = {k: npy(v) for k, v in model.named_parameters()}
    batch, window, n = x.shape
    d = model.d
    ys, alphas, betas = (
        np.zeros((batch, n)),
        np.zeros((batch, n, window, n)),
        np.zeros((batch, n, n)),
    )
    for b in range(batch):
        xb = npy(x[b])
        for e in range(n):
            h, c = np.zeros((n, d)), np.zeros((n, d))
            states = []
            for t in range(window):
                if model.full:
                    j = np.stack(
                        [
                            np.tanh(
                                h[v] @ p["w_j"][e, v] + xb[t, v] * p["u_j"][e, v] + p["b_j"][e, v]
                            )
                            for v in range(n)
                        ]
                    )
                    flat = np.concatenate([xb[t], h.reshape(-1)])
                    gates = sig(flat @ p["w_gates"][e] + p["b_gates"][e]).reshape(3, n, d)
                    c = gates[1] * c + gates[0] * j
                    h = gates[2] * np.tanh(c)
                else:
                    new_h, new_c = np.zeros((n, d)), np.zeros((n, d))
                    for v in range(n):
                        g = h[v] @ p["w"][e, v] + xb[t, v] * p["u"][e, v] + p["b"][e, v]
                        new_h[v], new_c[v] = lstm(g, c[v])
                    h, c = new_h, new_c
                states.append(h.copy())
            hs = np.stack(states)  # (W, N, d)
            alpha = np.zeros((window, n))
            for v in range(n):
                scores = [
                    np.tanh(hs[t, v] @ p["f_alpha"][e, v] + p["f_alpha_b"][e, v])
                    @ p["f_alpha_1"][e][:, 0]
                    + p["f_alpha_1_b"][e, 0]
                    for t in range(window)
                ]
                alpha[:, v] = softmax(scores)
            if "alpha" in force:
                alpha[:] = 1.0 / window
            mu, bscore = np.zeros(n), np.zeros(n)
            for v in range(n):
                g = (alpha[:, v, None] * hs[:, v]).sum(0)
                hg = np.concatenate([g, h[v]])
                mu[v] = hg @ p["phi"][e][:, 0] + p["phi_b"][e, 0]
                hidden = np.tanh(hg @ p["f_beta"][e, v] + p["f_beta_b"][e, v])
                bscore[v] = hidden @ p["f_beta_1"][e][:, 0] + p["f_beta_1_b"][e, 0]
            beta = softmax(bscore)
            if "beta" in force:
                beta[:] = 1.0 / n
            ys[b, e] = (beta * mu).sum()
            alphas[b, e], betas[b, e] = alpha, beta
    return ys, alphas, betas


def randomise(model, scale=0.6, seed=1):
    """Parameters drawn large enough that every gate and score matters."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn(param.shape, generator=gen, dtype=param.dtype) * scale)


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("force", [(), ("alpha",), ("beta",)])
def test_imv_lstm_forward_and_attention_by_hand(full, force):
    torch.manual_seed(0)
    model = mod.IMVLSTM(3, 2, full=full).double()
    randomise(model)
    model.force_uniform = set(force)
    x = sample(3)
    ys, alphas, betas = imv_reference(model, x, force)
    close(npy(model(x)), ys)
    att = model.explain(x)
    close(att.beta, betas.mean(0))
    # alpha (E, N, lag): lag 1 = the last window position
    close(att.alpha, alphas.mean(0).transpose(0, 2, 1)[:, :, ::-1])
    assert att.alpha_sources == "series" and att.picks is None


# ---------------------------------------------------------------- TCDF


def prelu(v, a):
    return np.where(v >= 0, v, a * v)


def tcdf_reference(model, x, force=()):
    n, levels, k = model.n, model.levels, model.kernel
    out = np.zeros((x.shape[0], n))
    for b in range(x.shape[0]):
        xb = npy(x[b])
        window = xb.shape[0]
        for e in range(n):
            weights = softmax(npy(model.attention[e]))
            if "beta" in force:
                weights[:] = 1.0 / n
            z = [xb[:, v] * weights[v] for v in range(n)]
            for level, conv in enumerate(model.convs):
                dil = model.dilation_c**level
                new = []
                for v in range(n):
                    ch = e * n + v
                    w, bias = npy(conv.weight[ch, 0]), float(conv.bias[ch].detach())
                    o = np.full(window, bias)
                    for t in range(window):
                        for j in range(k):
                            src = t - (k - 1 - j) * dil
                            if src >= 0:
                                o[t] += w[j] * z[v][src]
                    a = float(model.acts[level].weight[ch].detach())
                    if level == 0:
                        new.append(prelu(o, a))
                    elif level < levels - 1:
                        new.append(prelu(o + z[v], a))
                    else:
                        new.append(o + z[v])
                if level == levels - 1 and levels > 1:
                    lin, lin_b = npy(model.last_linear[e]), npy(model.last_linear_b[e])
                    new = [
                        sum(lin[jj, i] * new[i] for i in range(n)) + lin_b[jj] for jj in range(n)
                    ]
                z = new
            pw = npy(model.pointwise.weight[e, :, 0])
            out[b, e] = sum(pw[i] * z[i][-1] for i in range(n)) + float(
                model.pointwise.bias[e].detach()
            )
    return out


@pytest.mark.parametrize("levels", [1, 2, 3])
@pytest.mark.parametrize("force", [(), ("beta",)])
def test_tcdf_forward_by_hand(levels, force):
    torch.manual_seed(0)
    model = mod.TCDF(3, 10, levels=levels, kernel=3, dilation_c=2).double()
    randomise(model, seed=levels)
    model.force_uniform = set(force)
    x = sample(3, window=10)
    close(npy(model(x)), tcdf_reference(model, x, force))
    beta = model.explain(x).beta
    expected = np.stack([softmax(npy(model.attention[e])) for e in range(3)])
    close(beta, np.full((3, 3), 1 / 3) if force else expected)


def test_tcdf_default_forward_by_hand():
    torch.manual_seed(0)
    model = mod.build_model("tcdf", 2, hidden=4, window=10).double()
    randomise(model, seed=5)
    x = sample(2, window=10)
    close(npy(model(x)), tcdf_reference(model, x))


def test_tcdf_kernel_profile_enumerates_every_pair_of_taps():
    torch.manual_seed(0)
    model = mod.TCDF(2, 7, levels=2, kernel=3, dilation_c=3).double()
    randomise(model, seed=3)
    profiles = model.kernel_profiles()
    assert profiles.shape == (2, 2, 7)
    for e, v in itertools.product(range(2), range(2)):
        ch = e * 2 + v
        a1 = np.abs(npy(model.convs[0].weight[ch, 0]))
        a2 = np.abs(npy(model.convs[1].weight[ch, 0]))
        a1, a2 = a1 / a1.sum(), a2 / a2.sum()
        expected = np.zeros(7)
        for j1, j2 in itertools.product(range(3), range(3)):
            back = (2 - j1) * 1 + (2 - j2) * 3  # tap j looks (kernel-1-j)*dilation back
            if back < 7:
                expected[back] += a1[j1] * a2[j2]  # index 0 = lag 1
        close(profiles[e, v], expected / expected.sum())


def test_tcdf_kernel_profile_with_one_and_three_levels():
    """One level: the normalised |taps|, tap j at lag kernel - j. Three levels (kernel 2,
    dilations 1, 2, 4): every triple of taps enumerated."""
    model = mod.TCDF(1, 4, levels=1, kernel=3).double()
    with torch.no_grad():
        model.convs[0].weight[0, 0] = torch.tensor([0.5, -0.25, 0.25], dtype=torch.float64)
    close(model.kernel_profiles()[0, 0], [0.25, 0.25, 0.5, 0.0])
    model = mod.TCDF(1, 8, levels=3, kernel=2, dilation_c=2).double()
    randomise(model, seed=8)
    taps = [np.abs(npy(c.weight[0, 0])) for c in model.convs]
    taps = [t / t.sum() for t in taps]
    expected = np.zeros(8)
    for j1, j2, j3 in itertools.product(range(2), repeat=3):
        back = (1 - j1) * 1 + (1 - j2) * 2 + (1 - j3) * 4
        expected[back] += taps[0][j1] * taps[1][j2] * taps[2][j3]
    close(model.kernel_profiles()[0, 0], expected)


def test_tcdf_kernel_profile_sums_to_one_even_when_the_window_holds_little_mass():
    """Window 1 keeps only lag 1 (tap kernel - 1); with that tap at 1e-13 of the others the
    kept mass is ~5e-14, and the profile over the window is still normalised: [1]."""
    model = mod.TCDF(1, 1, levels=1, kernel=3).double()
    with torch.no_grad():
        model.convs[0].weight[0, 0] = torch.tensor([1.0, 1.0, 1e-13], dtype=torch.float64)
    close(model.kernel_profiles()[0, 0], [1.0])


def test_tcdf_delays_with_kernel_3():
    model = mod.TCDF(1, 10, levels=1, kernel=3).double()
    with torch.no_grad():
        model.convs[0].weight[0, 0] = torch.tensor([0.9, 0.2, 0.1], dtype=torch.float64)
    assert model.delays().tolist() == [[3]]  # argmax tap 0: 2 steps back, lag 3
    with torch.no_grad():
        model.convs[0].weight[0, 0] = torch.tensor([0.9, -0.9, 0.1], dtype=torch.float64)
    assert model.delays().tolist() == [[1]]  # tie for the largest |w|: delay 0


def test_tcdf_kernel_profile_of_zero_kernels_is_zero():
    model = mod.TCDF(2, 5, levels=1, kernel=2).double()
    with torch.no_grad():
        model.convs[0].weight.zero_()
    assert not model.kernel_profiles().any()  # no division by zero


def test_tcdf_delays_by_hand():
    model = mod.TCDF(2, 10, levels=2, kernel=4, dilation_c=4).double()
    taps0 = [
        [0.1, 0.9, 0.2, 0.3],
        [0.5, 0.5, 0.1, 0.0],
        [0.0, 0.1, 0.2, -0.7],
        [1.0, 0.1, 0.2, 0.3],
    ]
    taps1 = [
        [0.3, 0.2, 0.1, 0.0],
        [0.0, 0.0, 0.0, 0.4],
        [0.2, -0.6, 0.1, 0.1],
        [0.3, 0.1, 0.2, 0.3],
    ]
    with torch.no_grad():
        model.convs[0].weight[:, 0] = torch.tensor(taps0, dtype=torch.float64)
        model.convs[1].weight[:, 0] = torch.tensor(taps1, dtype=torch.float64)
    # per level: (kernel - 1 - argmax|w|) * dilation, 0 on a tie for the largest
    # channel 0: level0 argmax 1 -> 2; level1 argmax 0 -> 3*4 = 12; lag 2 + 12 + 1 = 15
    # channel 1: level0 tie 0.5/0.5 -> 0; level1 argmax 3 -> 0; lag 1
    # channel 2: level0 argmax 3 -> 0; level1 argmax 1 -> 2*4 = 8; lag 9
    # channel 3: level0 argmax 0 -> 3; level1 tie 0.3/0.3 -> 0; lag 4
    assert model.delays().tolist() == [[15, 1], [9, 4]]


def test_tcdf_per_target_loss_in_batches():
    torch.manual_seed(0)
    model = mod.TCDF(2, 5, levels=2, kernel=2).double()
    randomise(model, seed=2)
    x, y = sample(2, window=5, batch=7), sample(2, window=1, batch=7)[:, 0]
    pred = tcdf_reference(model, x)
    expected = ((pred - npy(y)) ** 2).mean(0)
    # the sums run in float32 (torch's default dtype for the accumulator)
    np.testing.assert_allclose(model.per_target_loss(x, y, batch=3), expected, rtol=1e-6)
    np.testing.assert_allclose(model.per_target_loss(x, y), expected, rtol=1e-6)


def zero_tcdf(n=3):
    """TCDF whose forecast is exactly 0 (all weights 0): the loss is known exactly."""
    model = mod.TCDF(n, 4, levels=2, kernel=2).double()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return model


def test_pivm_keeps_a_cause_when_the_loss_did_not_fall_at_all():
    """All-zero model: shuffling changes nothing, so test loss = real loss = 1 (y = 1).
    With the loss before training also 1, the decrease is 0 and the shuffled decrease 0:
    0 > 0 * 0.8 is false, so the potential cause is kept."""
    model = zero_tcdf()
    with torch.no_grad():
        model.attention[0] = torch.tensor([1.5, 0.5, 1.0])  # potential causes: > 1 (N <= 5)
        model.attention[1] = torch.tensor([0.5, 2.0, 3.0])
        model.attention[2] = torch.tensor([0.0, 0.0, 0.0])
    x, y = sample(3, window=4, batch=5), torch.ones(5, 3, dtype=torch.float64)
    validated = model.validate(x, y, np.ones(3), significance=0.8, seed=0)
    assert validated.tolist() == [[1, 0, 0], [0, 1, 1], [0, 0, 0]]
    # a loss that fell from 2 to 1 while shuffling left it at 1: shuffled decrease
    # 1 > 0.8 * 1, so not a cause
    assert model.validate(x, y, np.full(3, 2.0), significance=0.8).tolist() == [[0] * 3] * 3
    assert model.explain(x).picks.tolist() == [[0] * 3] * 3  # the validated ones
    assert model.validated.tolist() == [[0] * 3] * 3


@pytest.mark.parametrize(("significance", "seed"), [(0.6, 7), (None, None)])
def test_pivm_threshold_on_each_side(significance, seed):
    """A real model: real loss R, shuffled loss T (from a hand forward pass on the same
    shuffle: torch.randperm over the source's B x W values, generator seeded with ``seed``).
    The cause is kept iff first - T <= s (first - R), i.e. first <= F* = (T - s R) / (1 - s):
    first just below F* keeps it, just above drops it. Defaults: s = 0.8 (TCDF's), seed 0."""
    torch.manual_seed(0)
    model = mod.TCDF(2, 5, levels=2, kernel=2).double()
    randomise(model, seed=4)
    with torch.no_grad():
        model.attention[:] = torch.tensor([[0.0, 2.0], [0.0, 0.0]])  # 0 <- 1 only
    x, y = sample(2, window=5, batch=9), sample(2, window=1, batch=9, seed=3)[:, 0]
    real = ((tcdf_reference(model, x) - npy(y)) ** 2).mean(0)
    shuffled = x.clone()
    order = torch.randperm(9 * 5, generator=torch.Generator().manual_seed(seed or 0))
    shuffled[:, :, 1] = shuffled[:, :, 1].reshape(-1)[order].reshape(9, 5)
    test = ((tcdf_reference(model, shuffled) - npy(y)) ** 2).mean(0)
    s = significance or 0.8
    star = (test[0] - s * real[0]) / (1 - s)
    options = {} if seed is None else {"significance": significance, "seed": seed}
    for first, kept in ((star - 1e-6, 1), (star + 1e-6, 0)):
        validated = model.validate(x, y, np.array([first, 1.0]), **options)
        assert validated.tolist() == [[0, kept], [0, 0]], (first, star)


def test_tcdf_explain_picks_before_and_after_validation():
    model = zero_tcdf(2)
    with torch.no_grad():
        model.attention[:] = torch.tensor([[1.5, 0.2], [0.3, 1.2]])
    x = sample(2, window=4)
    assert model.explain(x).picks.tolist() == [[1, 0], [0, 1]]  # semi-binarised (> 1)
    model.validated.zero_()  # validated, none kept: min 0 still counts as validated
    assert model.explain(x).picks.tolist() == [[0, 0], [0, 0]]


# ---------------------------------------------------------------- DA-RNN


def darnn_reference(model, x, force=()):
    p = {k: npy(v) for k, v in model.named_parameters()}
    batch, window, n = x.shape
    m = model.m
    ys, temporal_all, beta_all = (
        np.zeros((batch, n)),
        np.zeros((batch, n, window)),
        np.zeros((batch, n, n)),
    )
    for b in range(batch):
        xb = npy(x[b])
        for e in range(n):
            series_term = [xb[:, v] @ p["in_u"][e] for v in range(n)]
            h, c = np.zeros(m), np.zeros(m)
            enc, weights = [], []
            for t in range(window):
                query = np.concatenate([h, c]) @ p["in_w"][e]
                score = np.array(
                    [np.tanh(query + series_term[v]) @ p["in_v"][e][:, 0] for v in range(n)]
                )
                others = [v for v in range(n) if v != e]
                weight = np.zeros(n)
                weight[others] = softmax(score[others])
                if "beta" in force:
                    weight[others] = 1.0 / (n - 1)
                gates = np.concatenate([weight * xb[t], h]) @ p["enc_w"][e] + p["enc_b"][e]
                h, c = lstm(gates, c)
                enc.append(h)
                weights.append(weight)
            enc = np.stack(enc)
            d, s, context = np.zeros(m), np.zeros(m), np.zeros(m)
            for t in range(window):
                query = np.concatenate([d, s]) @ p["tmp_w"][e]
                score = [
                    np.tanh(query + enc[k] @ p["tmp_u"][e]) @ p["tmp_v"][e][:, 0]
                    for k in range(window)
                ]
                temporal = softmax(score)
                if "alpha" in force:
                    temporal[:] = 1.0 / window
                context = (temporal[:, None] * enc).sum(0)
                y_in = np.concatenate([[xb[t, e]], context]) @ p["ytilde"][e][:, 0]
                gates = np.concatenate([[y_in], d]) @ p["dec_w"][e] + p["dec_b"][e]
                d, s = lstm(gates, s)
            hidden = np.concatenate([d, context]) @ p["out_w"][e]
            ys[b, e] = hidden @ p["out_v"][e][:, 0] + p["out_b"][e]
            temporal_all[b, e] = temporal
            beta_all[b, e] = np.mean(weights, axis=0)
    return ys, temporal_all, beta_all


@pytest.mark.parametrize("force", [(), ("alpha",), ("beta",)])
def test_darnn_forward_and_attention_by_hand(force):
    torch.manual_seed(0)
    model = mod.DARNN(3, 2, 5).double()
    randomise(model, seed=6)
    model.force_uniform = set(force)
    x = sample(3, window=5)
    ys, temporal, beta = darnn_reference(model, x, force)
    close(npy(model(x)), ys)
    att = model.explain(x)
    close(att.beta, beta.mean(0))
    close(att.alpha, temporal.mean(0)[:, None, ::-1])  # lag 1 = the last encoder state
    assert att.alpha_sources == "encoder"


# ---------------------------------------------------------------- seq2graph


def gru_last(gru, seq):
    """Last hidden state of a one-layer unidirectional torch GRU run on (T, features)."""
    _, last = gru(torch.from_numpy(seq)[None])
    return npy(last[-1, 0])


@pytest.mark.parametrize("force", [(), ("alpha",), ("beta",)])
def test_seq2graph_forward_and_attention_by_hand(force):
    torch.manual_seed(0)
    model = mod.Seq2Graph(3, 2).double()
    randomise(model, seed=7)
    model.force_uniform = set(force)
    x = sample(3, window=5)
    batch, window, n = x.shape
    ys, alphas, betas = np.zeros((batch, n)), np.zeros((batch, n, window)), np.zeros((batch, n, n))
    aw, ab, av = npy(model.alpha_w.weight), npy(model.alpha_w.bias), npy(model.alpha_v.weight)
    for b in range(batch):
        summaries = []
        for v in range(n):
            series = npy(x[b, :, v])[:, None]
            encoded, _ = model.encoder(torch.from_numpy(series)[None])
            features = np.concatenate([npy(encoded[0]), series], axis=1)
            alpha = softmax((np.tanh(features @ aw.T + ab) @ av.T)[:, 0])
            if "alpha" in force:
                alpha[:] = 1.0 / window
            alphas[b, v] = alpha
            summaries.append(np.tanh(gru_last(model.summary, alpha[:, None] * features)))
        summaries = np.stack(summaries)
        for e in range(n):
            score = np.tanh(summaries @ npy(model.beta_w[e])) @ npy(model.beta_v[e])[:, 0]
            beta = softmax(score)
            if "beta" in force:
                beta[:] = 1.0 / n
            betas[b, e] = beta
            decoded = np.tanh(gru_last(model.decoder, beta[:, None] * summaries))
            ys[b, e] = decoded @ npy(model.out_w[e])[:, 0] + float(model.out_b[e].detach())
    close(npy(model(x)), ys)
    att = model.explain(x)
    close(att.beta, betas.mean(0))
    per_source = alphas.mean(0)[:, ::-1]
    close(att.alpha, np.broadcast_to(per_source, (n, n, window)))


# ---------------------------------------------------------------- semi-binarisation


def semi_binarise_reference(scores):
    """TCDF's rule from the docstring: N <= 5, every score > 1; else gaps between consecutive
    sorted scores, listed while the upper score is >= 1; the cut is the largest gap at a
    position k with 0 < k < (N - 1) / 2 (else k = 0); the scores above it are the causes,
    provided the top score reaches 1. (The cases below have no tied gaps.)"""
    scores = [float(s) for s in scores]
    if len(scores) <= 5:
        return [int(s > 1.0) for s in scores]
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    ordered = [scores[i] for i in order]
    gaps = []
    for k in range(len(scores) - 1):
        if ordered[k] < 1.0:
            break
        gaps.append(ordered[k] - ordered[k + 1])
    qualifying = [k for k in range(len(gaps)) if 0 < k < (len(scores) - 1) / 2]
    cut = max(qualifying, key=lambda k: gaps[k]) if qualifying else 0
    picks = [0] * len(scores)
    if ordered[0] >= 1.0:
        for i in order[: cut + 1]:
            picks[i] = 1
    return picks


CASES = [
    ([1.0, 0.2, 1.5, 0.9, 1.2], [0, 0, 1, 0, 1]),  # N <= 5: strictly above 1
    ([1.0, 1.0, 1.0, 1.0, 1.0], [0, 0, 0, 0, 0]),
    ([3.0, 2.9, 1.5, 1.4, 0.2, 0.1], [1, 1, 0, 0, 0, 0]),  # gaps .1 1.4 .1 1.2: k = 1
    ([0.2, 3.0, 1.0, 0.99, 0.5, 0.4, 0.3], [0, 1, 1, 0, 0, 0, 0]),  # first gap (2) not counted
    ([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0, 0, 0, 0, 0, 0]),  # nothing reaches 1
    ([5.0, 1.0, 0.0, 0.0, 0.0, 0.0], [1, 1, 0, 0, 0, 0]),  # the gap below a score of 1 is listed
    ([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1, 0, 0, 0, 0, 0]),  # top exactly 1: picked (>= 1)
    ([9.0, 8.5, 8.2, 8.0, 1.0, 1.0, 1.0], [1, 1, 0, 0, 0, 0, 0]),  # k = 3 is not < 3
    ([9.0, 8.5, 8.3, 8.2, 1.0, 0.0, 0.0, 0.0], [1, 1, 1, 1, 0, 0, 0, 0]),  # k = 3 < 3.5
    ([1.0, 9.0, 8.5, 8.2, 8.0, 1.0, 1.0], [0, 1, 1, 0, 0, 0, 0]),  # order by score, not place
]


@pytest.mark.parametrize(("scores", "expected"), CASES)
def test_semi_binarise_against_its_definition_and_by_hand(scores, expected):
    assert semi_binarise_reference(scores) == expected
    assert mod.semi_binarise(np.array(scores)).tolist() == expected
