"""The interpretability suite's data-blind priors (``suites/interpretability/baselines.py``)
against numbers worked out here: the fixed lag counted over the generators' true edges, the
priors as attention distributions, the best prior by pair-counted AUROC on a hand-made
truth, and which prior names a tie (mutation sweep: tests/planted/s45_sweep.json)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from tsrate.suites.interpretability.baselines import FIXED_LAG, best_blind_prior, blind_priors
from tsrate.suites.interpretability.datasets import generate

WINDOW = 10


def test_the_fixed_lag_is_the_most_frequent_true_lag_of_datasets_2_to_8_and_10():
    """17 of the 71 true edges of datasets 2-8 and 10 sit at lag 3 (counted from the lag
    tensors the generators return, lag index 0 = lag 1); the prior puts all its alpha there."""
    lags = collections.Counter()
    for dataset_id in (2, 3, 4, 5, 6, 7, 8, 10):
        tensor = generate(dataset_id, length=60, burn_in=20, seed=2293).lag_tensor(WINDOW)
        lags.update(int(index) + 1 for index in np.argwhere(tensor > 0)[:, 2])
    (lag, count), (_, runner_up) = lags.most_common(2)
    assert (lag, count, sum(lags.values())) == (3, 17, 71) and runner_up < count
    assert FIXED_LAG == lag
    _, alpha, _ = blind_priors(4, WINDOW)["fixed_lag"]
    assert (alpha[:, :, 2] == 1.0).all() and alpha.sum() == alpha[:, :, 2].sum()


def test_the_fixed_lag_prior_is_the_best_on_a_truth_at_lag_3_only():
    """Every edge at lag 3: the fixed-lag prior's top-1 lag is right on every pair (1), the
    recency prior's never (0), the flat priors' one time in ten (ties shared)."""
    n = 3
    lag_truth = np.zeros((n, n, WINDOW))
    lag_truth[:, :, 2] = 1.0
    score, chance, name = best_blind_prior(
        np.ones((n, n)), np.ones(lag_truth.shape), None, np.ones((n, n)), lag_truth
    )["alpha_lag_topk"]
    assert (score, name) == (1.0, "fixed_lag")
    assert chance == pytest.approx(1 / WINDOW)


@pytest.mark.parametrize("n, window", [(3, 10), (5, 4)])
def test_every_prior_is_an_attention_distribution(n, window):
    """Each prior stands in for a model's attention: per target, beta sums to 1 over the
    sources; per (target, source), alpha sums to 1 over the lags; recency's alpha is
    proportional to 1 / lag (written out here: 1 / lag over the harmonic number)."""
    harmonic = sum(1.0 / lag for lag in range(1, window + 1))
    for name, (beta, alpha, picks) in blind_priors(n, window).items():
        assert beta.shape == (n, n) and alpha.shape == (n, n, window), name
        assert np.allclose(beta.sum(axis=1), 1.0), name
        assert np.allclose(alpha.sum(axis=2), 1.0), name
        assert (beta >= 0).all() and (alpha >= 0).all() and set(np.unique(picks)) <= {0.0, 1.0}
    expected = [1.0 / lag / harmonic for lag in range(1, window + 1)]
    assert blind_priors(n, window)["recency"][1][1, 2] == pytest.approx(expected)
    assert blind_priors(n, window)["lowest_index"][0][2].tolist() == [1.0] + [0.0] * (n - 1)


def auroc_by_pairs(scores: np.ndarray, labels: np.ndarray) -> float:
    pos, neg = scores[labels].ravel(), scores[~labels].ravel()
    wins = sum(1.0 if p > q else 0.5 if p == q else 0.0 for p in pos for q in neg)
    return wins / (pos.size * neg.size)


def test_the_best_prior_is_the_highest_score_not_one_above_an_earlier_chance():
    """Each series drives itself and series 0 drives series 1: the own-past prior's AUROC is
    0.9 (44 wins and 11 ties of 55 pairs), series 0's 0.61; the best is the own-past one,
    though series 0's score lies above the own-past prior's chance (1/2) too."""
    n = 4
    truth = np.eye(n)
    truth[1, 0] = 1.0
    own = auroc_by_pairs(np.eye(n), truth > 0)
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    lowest = auroc_by_pairs(first, truth > 0)
    assert own == pytest.approx(0.9) and 0.5 < lowest < own
    best = best_blind_prior(np.ones((n, n)), None, None, truth, np.zeros((n, n, 1)))
    assert best["beta_auroc"][0] == pytest.approx(own)
    assert best["beta_auroc"][2] == "autoregressive"


def test_a_tie_is_named_by_the_first_prior_listed():
    """Each series driven by the next one (the last by series 1): neither the own-past nor
    the series-0 prior beats a flat beta (AUROC by pairs <= 1/2), so the best AUROC is 1/2,
    shared by the three priors with a flat beta; it is named by the first, uniform."""
    n = 4
    truth = np.zeros((n, n))
    for target in range(n):
        truth[target, (target + 1) % n or 1] = 1.0
    first = np.zeros((n, n))
    first[:, 0] = 1.0
    assert auroc_by_pairs(np.eye(n), truth > 0) <= 0.5
    assert auroc_by_pairs(first, truth > 0) <= 0.5
    best = best_blind_prior(np.ones((n, n)), None, None, truth, np.zeros((n, n, 1)))
    assert best["beta_auroc"] == (0.5, 0.5, "uniform")
