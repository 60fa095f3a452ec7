"""Data-blind priors against the suite's fixed truths: a rule that never sees the data
must not count as interpretation.

The suite's own generators fix the truth's structure (dataset 2: each series drives only
itself; dataset 5: series 0 drives every series; the lattice: every edge at lag 1), so a
prior reaches the top score there. The rated margin is taken over the higher of the exact
chance level and the best data-blind prior; these tests compute the prior's score by hand
(pair counting, rank correlation by scipy) from the generator's edges.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tsrate.suites.interpretability import marts
from tsrate.suites.interpretability.datasets import generate
from tsrate.suites.interpretability.measures import correctness_with_chance

WINDOW = 10


def truth_of(dataset_id: int, **params):
    data = generate(dataset_id, length=60, burn_in=20, seed=2293, **params)
    return data, data.interaction_matrix(), data.lag_tensor(WINDOW)


def table(data, beta, alpha=None, model_id="imv_tensor"):
    """The marts' correctness table of one run with this attention on ``data``'s truth."""
    n = data.n_series
    runs = pd.DataFrame(
        [
            {"suite_run_id": "s", "run_key": "r", "variant_id": "v", "variant_key": "k",
             "model_id": model_id, "seed": 1, "n_series": n, "window_length": WINDOW}
        ]
    )  # fmt: skip
    cells = [
        {"run_key": "r", "attention": "beta", "target_index": t, "source_index": s,
         "lag": np.nan, "value": float(beta[t, s])}
        for t, s in itertools.product(range(n), range(n))
    ]  # fmt: skip
    if alpha is not None:
        cells += [
            {"run_key": "r", "attention": "alpha", "target_index": t, "source_index": s,
             "lag": float(lag + 1), "value": float(alpha[t, s, lag])}
            for t, s, lag in itertools.product(range(n), range(n), range(WINDOW))
        ]  # fmt: skip
    truth = pd.DataFrame(
        [
            {"variant_key": "k", "target_index": t, "source_index": s, "lag": lag, "weight": w}
            for t, s, lag, w in data.edges
        ]
    )
    return marts.correctness_table(runs, pd.DataFrame(cells), truth).set_index("measure")


def auroc_by_pairs(scores: np.ndarray, labels: np.ndarray) -> float:
    """AUROC by counting every (true, false) pair: 1 if the true cell scores higher, 1/2 tie."""
    pos, neg = scores[labels].ravel(), scores[~labels].ravel()
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p in pos for q in neg)
    return wins / (pos.size * neg.size)


def test_dataset_2_own_past_prior_is_the_bar_not_chance():
    data, truth, _ = truth_of(2)
    own = np.eye(data.n_series)  # "each series drives itself": no data looked at
    prior = stats.spearmanr(own.ravel(), truth.ravel()).statistic
    assert prior == pytest.approx(1.0)  # the autoregressive prior is perfect here
    out = table(data, beta=truth)  # a model whose beta IS the truth
    assert out.loc["beta_spearman", "value"] == pytest.approx(1.0)
    assert out.loc["beta_spearman", "chance"] == pytest.approx(0.0)  # exact chance kept
    # the margin the suite rates: nothing above what the blind prior gets
    assert out.loc["beta_spearman", "margin"] == pytest.approx(1.0 - prior)
    assert out.loc["beta_spearman_blind_prior", "value"] == pytest.approx(prior)
    assert out.loc["beta_spearman_blind_prior", "margin"] == pytest.approx(prior - 0.0)


def test_dataset_5_lowest_index_prior_sets_the_auroc_bar():
    data, truth, _ = truth_of(5)
    first = np.zeros_like(truth)
    first[:, 0] = 1.0  # "series 0 drives everything"
    prior = auroc_by_pairs(first, truth > 0)
    assert prior == 1.0
    flat = np.full_like(truth, 1.0 / data.n_series)
    out = table(data, beta=flat)
    assert out.loc["beta_auroc", "value"] == pytest.approx(0.5)
    assert out.loc["beta_auroc", "margin"] == pytest.approx(0.5 - prior)
    assert out.loc["beta_auroc_blind_prior", "value"] == pytest.approx(prior)


def test_the_lattice_recency_prior_sets_the_lag_bar():
    data, truth, lags = truth_of(9, side=3)
    recency = np.broadcast_to(1.0 / np.arange(1, WINDOW + 1), lags.shape)
    # every true pair has one true lag, lag 1, and recency ranks lag 1 first: top-1 share 1
    pairs = np.argwhere(lags.sum(-1) > 0)
    prior = np.mean([float(np.argmax(recency[t, s]) == np.argmax(lags[t, s])) for t, s in pairs])
    assert prior == 1.0
    uniform = np.full(lags.shape, 1.0 / WINDOW)
    out = table(data, beta=truth, alpha=uniform)
    assert out.loc["alpha_lag_topk", "value"] == pytest.approx(0.1)
    assert out.loc["alpha_lag_topk", "margin"] == pytest.approx(0.1 - prior)
    assert out.loc["alpha_lag_topk_blind_prior", "value"] == pytest.approx(prior)


def test_where_no_prior_beats_chance_the_margin_is_over_chance():
    """Dataset 4 (two series driving each other): the own-past prior scores Spearman -1 and
    AUROC 0, the others tie; the margin stays value - exact chance."""
    data, truth, _ = truth_of(4)
    beta = np.array([[0.3, 0.7], [0.6, 0.4]])
    plain = {r["measure"]: r for r in correctness_with_chance(beta, None, None, truth, 0 * truth)}
    out = table(data, beta=beta)
    for measure in ("beta_spearman", "beta_auroc"):
        assert out.loc[measure, "margin"] == pytest.approx(plain[measure]["margin"])
        assert out.loc[f"{measure}_blind_prior", "margin"] <= 1e-12
