"""The chance level is exact: the mean over EVERY permuted ground truth, not a sample.

:func:`tsrate.suites.interpretability.measures.chance_level` is the expected score of an
attention against ground truths whose sources are permuted uniformly within each target
among its candidate cells (finite beta; the permuted truth is 0 elsewhere), and whose lag
profiles are permuted uniformly in time. Here that expectation is replayed by brute force:
every combination of per-target (per-pair) permutations is scored with the plain measures
and averaged. A sampled chance level gave equally correct attentions different margins
(and ratings); the exact one gives them the same margin, and an attention at chance
margin 0."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tsrate.suites.interpretability.measures import (
    alpha_lag_topk,
    chance_level,
    correctness,
    correctness_with_chance,
)

TOL = 1e-12


def all_permuted_truths(truth: np.ndarray, beta: np.ndarray):
    """Every ground truth with each target's values permuted among its candidate cells."""
    candidates = [np.flatnonzero(np.isfinite(row)) for row in beta]
    per_target = [list(itertools.permutations(cells)) for cells in candidates]
    for choice in itertools.product(*per_target):
        t = np.zeros_like(truth)
        for target, (cells, order) in enumerate(zip(candidates, choice, strict=True)):
            t[target, list(order)] = truth[target, cells]
        yield t


def all_moved_lags(lag_truth: np.ndarray):
    """Every lag truth with each (target, source) pair's profile permuted in time."""
    n, m, window = lag_truth.shape
    pairs = [(i, j) for i in range(n) for j in range(m)]
    orders = list(itertools.permutations(range(window)))
    for choice in itertools.product(orders, repeat=len(pairs)):
        moved = np.empty_like(lag_truth)
        for (i, j), order in zip(pairs, choice, strict=True):
            moved[i, j] = lag_truth[i, j, list(order)]
        yield moved


def brute_force(beta, alpha, picks, truth, lag_truth) -> dict[str, float]:
    runs = [correctness(beta, None, picks, t, t) for t in all_permuted_truths(truth, beta)]
    out = {}
    for measure in runs[0]:
        values = np.array([r[measure] for r in runs])
        out[measure] = float(np.mean(values)) if np.isfinite(values).any() else float("nan")
        # a measure is defined for every permuted truth or for none (counts per target stay)
        assert np.isfinite(values).all() or not np.isfinite(values).any()
    if alpha is not None:
        values = np.array([alpha_lag_topk(alpha, moved) for moved in all_moved_lags(lag_truth)])
        out["alpha_lag_topk"] = float(np.mean(values)) if np.isfinite(values).any() else np.nan
    return out


def assert_same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for measure, value in want.items():
        if np.isnan(value):
            assert np.isnan(got[measure]), measure
        else:
            assert got[measure] == pytest.approx(value, abs=TOL, rel=0), measure


def random_case(seed: int, shape: tuple[int, int], kind: str):
    rng = np.random.default_rng([43, seed])
    beta = rng.random(shape)
    if kind == "ties":
        beta = np.round(beta * 3) / 3
    elif kind == "constant":
        beta = np.full(shape, 0.25)
    elif kind == "darnn":
        np.fill_diagonal(beta, np.nan)
    truth = np.where(rng.random(shape) < 0.4, rng.choice([0.2, 0.5, 1.0], shape), 0.0)
    truth[0, 1] = 0.7  # at least one true edge
    truth[-1, :] = 0.0  # a target with no true source
    picks = (rng.random(shape) < 0.4).astype(float)
    return beta, truth, picks


@pytest.mark.parametrize(
    "seed, shape, kind",
    [
        (0, (3, 3), "plain"),
        (1, (3, 3), "ties"),
        (2, (3, 3), "constant"),
        (3, (4, 4), "darnn"),
        (4, (2, 4), "plain"),
        (5, (2, 5), "ties"),
        (6, (3, 4), "darnn"),
    ],
)
def test_exact_chance_is_the_mean_over_every_permuted_truth(seed, shape, kind):
    beta, truth, picks = random_case(seed, shape, kind)
    for chosen in (None, picks):
        want = brute_force(beta, None, chosen, truth, None)
        assert_same(chance_level(beta, None, chosen, truth, np.zeros((*shape, 1))), want)


def test_a_target_whose_candidates_are_all_true_and_a_shared_value_are_enumerated_too():
    beta = np.array([[0.1, 0.5, 0.5], [0.3, 0.3, 0.2], [0.9, 0.05, 0.05]])
    truth = np.array([[1.0, 1.0, 1.0], [0.0, 0.4, 0.4], [0.0, 0.0, 0.2]])
    want = brute_force(beta, None, (beta > 0.25).astype(float), truth, None)
    got = chance_level(beta, None, (beta > 0.25).astype(float), truth, np.zeros((3, 3, 1)))
    assert_same(got, want)


@pytest.mark.parametrize("ties", [False, True])
def test_exact_lag_chance_is_the_mean_over_every_moved_lag_profile(ties):
    rng = np.random.default_rng(int(ties))
    alpha = rng.random((2, 2, 3))
    if ties:
        alpha = np.round(alpha * 2) / 2
    alpha[1, 1] = np.nan  # a pair with no finite lag is never scored
    lag_truth = np.zeros((2, 2, 3))
    lag_truth[0, 0, 1] = 1.0
    lag_truth[0, 1, [0, 2]] = 0.5
    lag_truth[1, 0, :] = 1.0  # as many true lags as candidates: left out
    lag_truth[1, 1, 0] = 1.0
    beta, truth = np.array([[0.2, 0.8], [0.6, 0.4]]), np.array([[0.0, 1.0], [1.0, 0.0]])
    want = brute_force(beta, alpha, None, truth, lag_truth)
    assert_same(chance_level(beta, alpha, None, truth, lag_truth), want)


# dataset 4's truth and three attentions: A and B rank it perfectly, C is at chance
TRUTH4 = np.array([[0.0, 1.0], [1.0, 0.0]])
A = np.array([[0.039, 0.961], [0.949, 0.051]])
B = np.array([[0.283, 0.717], [0.803, 0.197]])
C = np.array([[0.45, 0.55], [0.45, 0.55]])


def margins(beta: np.ndarray, truth: np.ndarray = TRUTH4) -> dict[str, float]:
    lags = np.zeros((*truth.shape, 3))
    return {
        r["measure"]: r["margin"] for r in correctness_with_chance(beta, None, None, truth, lags)
    }


def test_equally_correct_attentions_get_equal_margins():
    a, b = margins(A), margins(B)
    for measure in ("beta_spearman", "beta_auroc"):
        assert a[measure] == pytest.approx(b[measure], abs=TOL, rel=0), measure
    # the exact chance on this truth: Spearman 0, AUROC 1/2
    assert a["beta_auroc"] == pytest.approx(0.5, abs=TOL)


def test_an_attention_at_chance_gets_margin_zero():
    c = margins(C)
    for measure in ("beta_spearman", "beta_auroc"):
        assert c[measure] == pytest.approx(0.0, abs=TOL), measure


def test_attentions_that_rank_the_truth_alike_get_identical_margins():
    rng = np.random.default_rng(7)
    truth = np.where(rng.random((5, 5)) < 0.3, rng.choice([0.3, 1.0], (5, 5)), 0.0)
    truth[0, 1] = 1.0
    beta = rng.random((5, 5))
    same_order = np.exp(3 * beta) - 2  # strictly increasing: the same ranks everywhere
    one, other = margins(beta, truth), margins(same_order, truth)
    for measure in ("beta_spearman", "beta_topk", "beta_auroc"):
        assert one[measure] == other[measure], measure


def test_chance_level_refuses_a_truth_it_cannot_permute():
    with pytest.raises(ValueError):
        chance_level(A, None, None, np.array([[np.nan, 1.0], [1.0, 0.0]]), np.zeros((2, 2, 1)))
