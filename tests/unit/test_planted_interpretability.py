"""Planted-error checks of the interpretability suite's science: measures on hand-worked
attention, and the generators' lags and switching rule read back from the series they
produce (each test says what independent computation it compares with)."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.suites.interpretability import measures
from tsrate.suites.interpretability.datasets import dataset2, dataset8


def test_alpha_lag_topk_leaves_out_pairs_whose_every_lag_is_true():
    """Hand-worked, 1 target x 2 sources x 3 lags. Source 0: all 3 lags true (recovery
    certain by construction: left out, as the docstring says for beta_topk's analogue);
    source 1: lag 1 true but attention puts it last (share 0). Mean over the pairs that
    count: 0 (counting the certain pair would give 0.5)."""
    alpha = np.array([[[0.2, 0.3, 0.5], [0.1, 0.4, 0.5]]])
    truth = np.array([[[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]]])
    assert measures.alpha_lag_topk(alpha, truth) == 0.0
    truth[0, 1] = [0.0, 0.0, 1.0]  # now the top lag is the true one
    assert measures.alpha_lag_topk(alpha, truth) == 1.0


def test_tcdf_precision_and_recall_by_hand():
    """Picks {(0,1), (1,0), (2,2)}, true edges {(0,1), (2,0)}: one hit, so precision
    1/3 (of the picks) and recall 1/2 (of the true edges)."""
    picks = np.zeros((3, 3))
    picks[0, 1] = picks[1, 0] = picks[2, 2] = 1
    truth = np.zeros((3, 3))
    truth[0, 1] = truth[2, 0] = 0.5
    precision, recall = measures.pick_precision_recall(picks, truth)
    assert precision == pytest.approx(1 / 3)
    assert recall == pytest.approx(1 / 2)


def test_lag_tensor_keeps_a_lag_equal_to_the_window():
    """Dataset 2 drives each series by itself at lags 3 and 7 (weight 1/2 each): a window of
    7 holds both (index 6 = lag 7), a window of 6 only lag 3."""
    data = dataset2(length=50, n_series=2, burn_in=0, seed=0)
    seven = data.lag_tensor(7)
    assert seven[0, 0, 2] == 0.5 and seven[0, 0, 6] == 0.5 and seven.sum() == 2.0
    six = data.lag_tensor(6)
    assert six[1, 1, 2] == 0.5 and six.sum() == 1.0


def test_dataset8_regime_is_read_at_lag_five_where_lags_four_and_five_disagree():
    """Docstring: the rule is chosen by X0_{t-5} > 0.5; X1 = X0_{t-5} in regime A and
    X3_{t-2} otherwise, plus noise that fires with probability f. Computed from the series
    alone: at the steps where X0_{t-4} and X0_{t-5} lie on different sides of 0.5 (where a
    rule read at the wrong lag would pick the other branch), X1 still equals the lag-5
    rule's value exactly wherever no noise fired (share 1 - f = 0.7)."""
    exact1, exact2 = [], []
    for seed in range(8):  # X0 is a random walk: it crosses 0.5 mostly early on
        x = dataset8(length=2000, burn_in=0, sigma=1.0, seed=seed).values
        t = np.arange(10, len(x))
        regime_a = x[t - 5, 0] > 0.5
        disagree = regime_a != (x[t - 4, 0] > 0.5)
        x1 = np.where(regime_a, x[t - 5, 0], x[t - 2, 3])
        x2 = np.where(regime_a, x[t - 4, 0], x[t - 4, 3])
        exact1 += list(np.abs(x[t, 1] - x1)[disagree] < 1e-12)
        exact2 += list(np.abs(x[t, 2] - x2)[disagree] < 1e-12)
    assert len(exact1) > 300
    assert np.mean(exact1) == pytest.approx(0.7, abs=0.08)
    assert np.mean(exact2) == pytest.approx(0.7, abs=0.08)


def test_semi_binarise_with_five_series_takes_every_score_above_one():
    """TCDF (M-Nauta/TCDF, and the docstring): with at most 5 series every score > 1 is a
    potential cause. Five scores 2.0, 1.9, 1.8, 0.5, 0.4 give the first three; the gap rule
    (for more series) would keep only the first here (its largest gap, after 1.8, is not in
    the first half of the list)."""
    from tsrate.suites.interpretability.models import semi_binarise

    assert semi_binarise(np.array([1.9, 0.5, 2.0, 0.4, 1.8])).tolist() == [1, 0, 1, 0, 1]
    assert semi_binarise(np.array([1.0, 0.9, 0.5, 0.2, 0.1])).tolist() == [0, 0, 0, 0, 0]


def _older_lags_unmoved_by_the_last_step(model, n_series: int = 3, window: int = 10):
    """Explain one window (batch 1) before and after changing its LAST step: returns the
    relative weights of lags 2..W before and after, and the change of the lag-1 weight."""
    import torch

    x = torch.randn(1, window, n_series)
    moved = x.clone()
    moved[:, -1, :] += 2.0
    before = model.explain(x).alpha
    after = model.explain(moved).alpha
    older_before = before[..., 1:] / before[..., 1:].sum(-1, keepdims=True)
    older_after = after[..., 1:] / after[..., 1:].sum(-1, keepdims=True)
    return older_before, older_after, np.abs(after[..., 0] - before[..., 0]).max()


@pytest.mark.parametrize("model_id", ["imv_full", "imv_tensor", "darnn", "seq2graph"])
def test_alpha_lag_one_is_the_most_recent_step(model_id):
    """Module doc: alpha's lag 1 = the most recent step (inputs oldest first). Checked by
    causality: where the temporal score of step t reads only what the inputs up to t (or
    step t alone) determine, changing the LAST input step moves the lag-1 weight and
    leaves the relative weights of lags 2..W untouched (softmax ratios).

    IMV-LSTM: the score of step t reads h_t, which depends on inputs up to t. DA-RNN: made
    causal by zeroing the input attention's whole-window term (``in_u``) and the temporal
    query (``tmp_w``), so the score of encoder state t reads that state alone. seq2graph:
    its encoder is bidirectional, so the score is made to read the raw input x_t alone
    (the encoder columns of ``alpha_w`` zeroed). Fresh weights give near-uniform attention,
    so all weights are scaled x 5 first."""
    import torch

    from tsrate.suites.interpretability.models import build_model

    torch.manual_seed(0)
    model = build_model(model_id, 3, 8, 10)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(5.0)
        if model_id == "darnn":
            model.in_u.zero_()
            model.tmp_w.zero_()
        if model_id == "seq2graph":
            model.alpha_w.weight[:, :-1] = 0.0
    older_before, older_after, lag_one_change = _older_lags_unmoved_by_the_last_step(model)
    np.testing.assert_allclose(older_after, older_before, rtol=1e-5)
    assert lag_one_change > 1e-3


def test_semi_binarise_skips_the_first_gap_when_another_qualifies():
    """TCDF's rule (reference ``findcauses``, and the docstring) for more than 5 series:
    the cut is the largest gap, among scores >= 1, in the first half of the list and not
    the first gap. Six scores 3.0, 1.5, 1.4, 1.3, 0.2, 0.1: gaps 1.5 (first: skipped), 0.1,
    0.1, 1.1 (index 3, not in the first half), so the cut is after the second score (the
    first qualifying 0.1 gap): the causes are 3.0 and 1.5."""
    from tsrate.suites.interpretability.models import semi_binarise

    scores = np.array([0.2, 1.5, 3.0, 1.3, 0.1, 1.4])
    assert semi_binarise(scores).tolist() == [0, 1, 1, 0, 0, 0]


def test_first_ten_values_are_standard_normal():
    """Module doc: the first INIT_STEPS = 10 values of every series are drawn from
    N(0, 1). Without burn-in they are the first rows: over 500 series their sd is 1
    (sampling error ~1 %)."""
    from tsrate.suites.interpretability.datasets import dataset3, dataset4

    first = dataset2(length=10, n_series=500, burn_in=0, seed=4).values
    assert first.std() == pytest.approx(1.0, rel=0.05) and abs(first.mean()) < 0.05
    assert dataset3(length=10, n_series=500, burn_in=0, seed=4).values.std() == pytest.approx(
        1.0, rel=0.05
    )
    pair = np.concatenate([dataset4(length=10, burn_in=0, seed=s).values for s in range(250)])
    assert pair.std() == pytest.approx(1.0, rel=0.05)
