"""The chance level's shared-work path gives the plain measures' values to the bit.

:func:`tsrate.suites.interpretability.measures.chance_level` scores one attention against
100 permuted ground truths per run; it computes the attention's ranks and top-k sorts once
(``_PermutedSources``, ``_PermutedLags``) instead of calling :func:`correctness` and
:func:`alpha_lag_topk` each time. Here both paths meet on random attentions with ties,
NaN cells (DA-RNN's diagonal), constant rows and TCDF picks: every value equal exactly
(``==``, NaN where the plain one is NaN), and the average ranks equal scipy's rankdata."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from tsrate.suites.interpretability import measures
from tsrate.suites.interpretability.measures import (
    _average_ranks,
    _permuted_truths,
    _PermutedLags,
    _PermutedSources,
    alpha_lag_topk,
    correctness,
)


def same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == b


def attention(rng, n: int, kind: str) -> np.ndarray:
    beta = rng.random((n, n))
    if kind == "ties":
        beta = np.round(beta * 3) / 3  # few levels: many ties
    elif kind == "constant":
        beta = np.full((n, n), 1.0 / n)
    elif kind == "darnn":
        np.fill_diagonal(beta, np.nan)
    return beta


@pytest.mark.parametrize("kind", ["plain", "ties", "constant", "darnn"])
@pytest.mark.parametrize("n", [2, 5, 16])
def test_permuted_sources_score_like_correctness(kind, n):
    rng = np.random.default_rng([n, len(kind)])
    beta = attention(rng, n, kind)
    truth = np.where(rng.random((n, n)) < 0.3, rng.choice([0.2, 0.4, 1.0], (n, n)), 0.0)
    truth[0, 1] = 0.5  # at least one true edge
    picks = (rng.random((n, n)) < 0.2).astype(float)
    for chosen in (None, picks):
        scorer = _PermutedSources(beta, chosen)
        for t in [truth, *_permuted_truths(truth, beta, 30, seed=n)]:
            fast, plain = scorer(t), correctness(beta, None, chosen, t, t)
            assert fast.keys() == plain.keys()
            for measure, value in plain.items():
                assert same(fast[measure], value), (measure, fast[measure], value)


@pytest.mark.parametrize("ties", [False, True])
def test_permuted_lags_score_like_alpha_lag_topk(ties):
    rng = np.random.default_rng(int(ties))
    n, window = 4, 10
    alpha = rng.random((n, n, window))
    if ties:
        alpha = np.round(alpha * 2) / 2
    alpha[0, 0] = np.nan  # a pair with no finite lag is never scored
    alpha[1, 1, :] = 0.1  # a constant profile: every lag tied
    lag_truth = np.zeros((n, n, window))
    lag_truth[0, 1, [1, 4]] = 0.5
    lag_truth[1, 1, [2]] = 1.0
    lag_truth[2, 3, :] = 1.0  # as many true lags as candidates: left out
    lag_truth[3, 0, [0, 8, 9]] = 0.3
    scorer = _PermutedLags(alpha, lag_truth)
    moves = np.random.default_rng(7)
    for _ in range(40):
        moved = np.take_along_axis(
            lag_truth, np.argsort(moves.random(lag_truth.shape), axis=-1), axis=-1
        )
        assert same(scorer(moved), alpha_lag_topk(alpha, moved))
    # a truth whose pairs hold other numbers of true lags takes the plain path
    other = np.zeros_like(lag_truth)
    other[3, 2, :3] = 1.0
    assert same(scorer(other), alpha_lag_topk(alpha, other))


def test_chance_level_is_the_mean_over_the_plain_measures():
    """The chance level by hand: the plain measures averaged over the same permutations."""
    rng = np.random.default_rng(3)
    beta = np.round(rng.random((5, 5)) * 4) / 4
    truth = np.zeros((5, 5))
    truth[[0, 1, 2, 4], [1, 2, 0, 3]] = [0.5, 1.0, 0.25, 1.0]
    lag_truth = np.zeros((5, 5, 6))
    lag_truth[0, 1, 2] = lag_truth[1, 2, [0, 3]] = 1.0
    alpha = rng.random((5, 5, 6))
    got = measures.chance_level(beta, alpha, None, truth, lag_truth, 25, seed=4)
    runs = [
        correctness(beta, None, None, t, lag_truth) for t in _permuted_truths(truth, beta, 25, 4)
    ]
    for measure in ("beta_spearman", "beta_topk", "beta_auroc"):
        assert got[measure] == float(np.nanmean([r[measure] for r in runs]))
    moves = np.random.default_rng([4, 1])
    values = [
        alpha_lag_topk(
            alpha,
            np.take_along_axis(lag_truth, np.argsort(moves.random(lag_truth.shape), -1), -1),
        )
        for _ in range(25)
    ]
    assert got["alpha_lag_topk"] == float(np.nanmean(values))


def test_average_ranks_are_scipys():
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 60):
        for levels in (1, 3, 1000):
            x = rng.integers(0, levels, size).astype(float) * 0.3
            assert np.array_equal(_average_ranks(x), stats.rankdata(x))
