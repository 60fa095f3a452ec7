"""The mutation sweep of the interpretability suite's exact chance level
(tsrate.suites.interpretability.measures.chance_level; tests/planted/s44_sweep.json): the
smallest truths -- one candidate per target, two candidates, a constant truth, one true or
one false edge. Every expectation is brute force written here: each target's truth values
permuted over its candidate cells in every way, scored with scipy's Spearman and a pair
count for AUROC, and averaged."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

from tsrate.suites.interpretability.measures import chance_level

NAN = np.nan


def permuted_truths(truth: np.ndarray, beta: np.ndarray):
    """Every truth with each row's candidate values (finite beta) permuted among its
    candidate cells, 0 elsewhere."""
    cells = [np.flatnonzero(np.isfinite(row)) for row in beta]
    for orders in itertools.product(*(itertools.permutations(c) for c in cells)):
        permuted = np.zeros_like(truth)
        for row, (at, order) in enumerate(zip(cells, orders, strict=True)):
            permuted[row, list(order)] = truth[row, at]
        yield permuted


def pair_auroc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(a true cell outscores a false one), ties 1/2, by counting every pair."""
    pos, neg = scores[labels], scores[~labels]
    if pos.size == 0 or neg.size == 0:
        return NAN
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (pos.size * neg.size)


def brute(beta: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    keep = np.isfinite(beta)
    rho, area = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # spearmanr of a constant truth: nan, with a warning
        for t in permuted_truths(truth, beta):
            rho.append(stats.spearmanr(beta[keep], t[keep]).statistic if keep.sum() > 1 else NAN)
            area.append(pair_auroc(beta[keep], t[keep] > 0))
    return {"beta_spearman": float(np.mean(rho)), "beta_auroc": float(np.mean(area))}


def assert_chance(beta: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    got = chance_level(beta, None, None, truth, truth)
    for measure, want in brute(beta, truth).items():
        if np.isnan(want):
            assert np.isnan(got[measure]), measure
        else:
            assert got[measure] == pytest.approx(want, abs=1e-12, rel=0), measure
    return got


def test_one_candidate_per_target_keeps_the_truth_where_it_is():
    """Two targets, one candidate each: no permutation moves anything, so the chance level
    is the attention's own score, Spearman 1 and AUROC 1 (two cells: one true, one false)."""
    beta = np.array([[NAN, 0.9], [0.1, NAN]])
    truth = np.array([[0.0, 1.0], [0.0, 0.0]])
    got = assert_chance(beta, truth)
    assert got["beta_spearman"] == pytest.approx(1.0, abs=1e-12)
    assert got["beta_auroc"] == 1.0


def test_two_candidates_of_one_target_average_to_no_correlation():
    """One target, two candidates, truth 1 and 0: swapped or not, Spearman is +1 or -1, mean
    0; AUROC 1 or 0, mean 1/2."""
    beta = np.array([[0.2, 0.7]])
    truth = np.array([[1.0, 0.0]])
    got = assert_chance(beta, truth)
    assert got["beta_spearman"] == pytest.approx(0.0, abs=1e-12)
    assert got["beta_auroc"] == 0.5


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_a_constant_truth_has_no_spearman_chance(value):
    """Every candidate equal in the truth: nothing to correlate with (nan), also for one
    candidate only."""
    beta = np.array([[NAN, 0.3, 0.8], [0.5, NAN, 0.1], [0.4, 0.6, NAN]])
    assert np.isnan(assert_chance(beta, np.full((3, 3), value))["beta_spearman"])
    lone = np.array([[NAN, 0.3]])
    assert np.isnan(chance_level(lone, None, None, np.full((1, 2), value), lone)["beta_spearman"])


def test_one_true_edge_or_one_false_edge_has_an_auroc_chance():
    """3 x 3 without the diagonal: a single true edge (one positive, five negatives), and a
    single false one (five positives, one negative), each against the brute force."""
    beta = np.array([[NAN, 0.3, 0.8], [0.5, NAN, 0.1], [0.4, 0.6, NAN]])
    one_true = np.zeros((3, 3))
    one_true[0, 2] = 1.0
    one_false = np.ones((3, 3)) - np.eye(3)
    one_false[1, 2] = 0.0
    for truth in (one_true, one_false):
        got = assert_chance(beta, truth)
        assert np.isfinite(got["beta_auroc"])
