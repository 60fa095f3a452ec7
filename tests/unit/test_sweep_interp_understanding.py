"""What the mutation sweep of the interpretability measures, the understanding suite's answer
scoring and its multivariate generators found uncaught, each pinned against an independent
computation (hand-worked numbers with their derivation, or numpy / scipy written from the
definition).

Spec: tests/planted/sweep_interp_understanding.json.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from tsrate.suites.interpretability.measures import (
    beta_spearman,
    beta_topk,
    chance_level,
    correctness_with_chance,
    expected_topk_hits,
    normalised_entropy,
    undefined_reason,
)
from tsrate.suites.understanding.generators.multivariate import (
    correlation,
    cross_correlation,
    dynamic_correlation,
)
from tsrate.suites.understanding.scoring import f1_macro, parse_answer, score_answer

# --------------------------------------------------------------------------------------
# Multivariate generators (paper Appendix B.2): each series rebuilt from its docstring,
# replaying the same random draws in the same order from a generator with the same seed.
# --------------------------------------------------------------------------------------


def _levels_and_scales(rng: np.random.Generator, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each series shown at a level in [50, 100) and a scale in [2, 6)."""
    levels = rng.uniform(50.0, 100.0, 2)
    scales = rng.uniform(2.0, 6.0, 2)
    return np.column_stack([levels[0] + scales[0] * a, levels[1] + scales[1] * b])


def _stationary_ar1(eps: np.ndarray, phi: float) -> np.ndarray:
    """x_0 drawn from the stationary law (sd 1 / sqrt(1 - phi^2)), x_t = phi x_(t-1) + e_t."""
    x = np.empty(eps.size)
    x[0] = eps[0] / np.sqrt(1.0 - phi * phi)
    for t in range(1, eps.size):
        x[t] = phi * x[t - 1] + eps[t]
    return x


@pytest.mark.parametrize("kind", ["positive", "negative", "none"])
def test_correlation_pair_is_rebuilt_from_its_definition(kind):
    """b = rho z1 + sqrt(1 - rho^2) z2 with |rho| in [0.6, 0.95] and the kind's sign
    (0 for none); the label's sample rho is Pearson's r of the shown series."""
    n, seed = 40, 11
    values, got_kind, labels, _, specifics = correlation(np.random.default_rng(seed), n, kind)
    rng = np.random.default_rng(seed)
    sign = {"positive": 1.0, "negative": -1.0, "none": 0.0}[kind]
    rho = sign * rng.uniform(0.6, 0.95)
    z = rng.normal(0.0, 1.0, (n, 2))
    b = rho * z[:, 0] + np.sqrt(1.0 - rho * rho) * z[:, 1]
    expected = _levels_and_scales(rng, z[:, 0], b)
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert got_kind == kind
    assert labels["rho"] == pytest.approx(rho, abs=1e-12)
    x, y = expected[:, 0] - expected[:, 0].mean(), expected[:, 1] - expected[:, 1].mean()
    r = float((x * y).sum() / np.sqrt((x * x).sum() * (y * y).sum()))
    assert labels["sample_rho"] == pytest.approx(r, abs=1e-12)
    assert specifics == f"Their sample correlation coefficient is {r:.2f}."
    if kind != "none":
        assert 0.6 <= abs(labels["rho"]) <= 0.95 and np.sign(labels["rho"]) == sign


@pytest.mark.parametrize(
    "kind", ["positive_direct", "positive_lagged", "negative_direct", "negative_lagged"]
)
def test_cross_correlation_pair_is_rebuilt_from_its_definition(kind):
    """Series1 = an AR(1) (phi 0.3) read ``lag`` steps ahead; Series2 = sign x the same
    AR(1) + 0.3 N(0, 1) noise, so Series2 repeats Series1 ``lag`` days later; lag 0 when
    direct, else uniform on 2..6."""
    n, seed = 30, 5
    values, _, labels, qualitative, specifics = cross_correlation(
        np.random.default_rng(seed), n, kind
    )
    rng = np.random.default_rng(seed)
    sign = 1.0 if kind.startswith("positive") else -1.0
    lag = 0 if kind.endswith("direct") else int(rng.integers(2, 7))
    x = _stationary_ar1(rng.normal(0.0, 1.0, n + lag), 0.3)
    noise = rng.normal(0.0, 1.0, n)
    expected = _levels_and_scales(rng, x[lag : lag + n], sign * x[:n] + 0.3 * noise)
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert labels == {"sign": "positive" if sign > 0 else "negative", "lag": lag}
    how = "positively" if sign > 0 else "negatively"
    assert f"are {how} related" in qualitative
    if lag:
        assert 2 <= lag <= 6
        assert specifics.startswith(f"Series2 repeats Series1's moves {lag} days later")


def test_cross_correlation_lags_cover_two_to_six_days():
    """The lagged kinds draw the lag uniformly from 2..6: over 200 draws every one of the
    five lags occurs (P(one is missing) < 5 x 0.8^200) and nothing else does."""
    rng = np.random.default_rng(0)
    lags = {cross_correlation(rng, 10, "positive_lagged")[2]["lag"] for _ in range(200)}
    assert lags == {2, 3, 4, 5, 6}


@pytest.mark.parametrize("seed", [21, 22])  # rho > 0 with seed 21, < 0 with seed 22
@pytest.mark.parametrize("kind", ["correlated_first_half", "correlated_second_half", "constant"])
def test_dynamic_correlation_pair_is_rebuilt_from_its_definition(kind, seed):
    """rho = +-U[0.8, 0.95]; the switch k is uniform on int(0.4 n)..int(0.6 n); rho holds
    for t < k (first half), t >= k (second half) or always (constant), 0 elsewhere."""
    n = 50
    values, _, labels, qualitative, specifics = dynamic_correlation(
        np.random.default_rng(seed), n, kind
    )
    rng = np.random.default_rng(seed)
    rho = float(rng.choice([1.0, -1.0])) * rng.uniform(0.8, 0.95)
    k = int(rng.integers(20, 31))  # int(0.4 * 50) = 20 .. int(0.6 * 50) = 30 inclusive
    t = np.arange(n)
    rho_t = {
        "correlated_first_half": np.where(t < k, rho, 0.0),
        "correlated_second_half": np.where(t >= k, rho, 0.0),
        "constant": np.full(n, rho),
    }[kind]
    z = rng.normal(0.0, 1.0, (n, 2))
    b = rho_t * z[:, 0] + np.sqrt(1.0 - rho_t * rho_t) * z[:, 1]
    expected = _levels_and_scales(rng, z[:, 0], b)
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert labels["rho"] == pytest.approx(rho, abs=1e-12)
    assert labels["switch_index"] == (None if kind == "constant" else k)
    word = "positively" if rho > 0 else "negatively"
    assert f"{word} correlated" in qualitative
    assert specifics.startswith(f"The correlation is about {rho:.2f} where present")
    if kind == "constant":
        assert specifics.endswith("where present.")
    else:
        assert specifics.endswith(f", switching after {k} days.")


def test_dynamic_correlation_switch_covers_forty_to_sixty_percent_inclusive():
    """n = 10: the switch is uniform on 4..6 (both ends included); over 120 draws each of
    the three occurs (P(one is missing) < 3 x (2/3)^120)."""
    rng = np.random.default_rng(1)
    ks = {
        dynamic_correlation(rng, 10, "correlated_first_half")[2]["switch_index"] for _ in range(120)
    }
    assert ks == {4, 5, 6}


# --------------------------------------------------------------------------------------
# Interpretability measures
# --------------------------------------------------------------------------------------


def test_spearman_of_two_cells_is_plus_or_minus_one_and_no_cell_is_undefined():
    """Two cells with different attention and different truth are perfectly (anti-)ranked:
    Spearman +1 or -1. With no finite cell at all there is nothing to rank: NaN (not an
    error)."""
    assert beta_spearman(np.array([[0.2, 0.8]]), np.array([[0.0, 1.0]])) == pytest.approx(1.0)
    assert beta_spearman(np.array([[0.8, 0.2]]), np.array([[0.0, 1.0]])) == pytest.approx(-1.0)
    assert np.isnan(beta_spearman(np.full((2, 2), np.nan), np.eye(2)))


def test_expected_topk_hits_with_k_above_one():
    """Scores 5 4 3 2 1 (distinct), the cell scored 2 relevant: the 3 highest (5, 4, 3)
    miss it, the 4 highest hold it. k = n takes every cell: all relevant ones."""
    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    relevant = np.array([False, False, False, True, False])
    assert expected_topk_hits(scores, relevant, 3) == 0.0
    assert expected_topk_hits(scores, relevant, 4) == 1.0
    both = np.array([True, False, False, True, True])
    assert expected_topk_hits(scores, both, 5) == 3.0
    # ties at the k-th place: scores 3 2 2 1, k = 2: 3 is in (not relevant), then one of
    # the two 2s, the relevant one with probability 1/2
    second = np.array([False, True, False, False])
    assert expected_topk_hits(np.array([3.0, 2.0, 2.0, 1.0]), second, 2) == 0.5


def test_beta_topk_rejects_a_truth_of_another_shape():
    """A truth with fewer targets than the attention is an error, not a silent subset."""
    with pytest.raises(ValueError):
        beta_topk(np.full((3, 3), 1 / 3), np.eye(3)[:2])


def test_normalised_entropy_by_hand_on_a_non_square_lag_tensor():
    """Rows of a (2 x 3 x 3) tensor, last axis = candidates:
    [2, 2, 0] -> p = (1/2, 1/2, 0): ln 2 / ln 3;  [1, 1, 1] and [3, 3, 3]: 1;
    [1, 0, 0]: 0;  [nan, nan, 5] (one candidate) and [0, 0, 0] (no weight): skipped.
    Mean of the four: (ln 2 / ln 3 + 2) / 4."""
    w = np.array(
        [
            [[2.0, 2.0, 0.0], [1.0, 1.0, 1.0], [np.nan, np.nan, 5.0]],
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [3.0, 3.0, 3.0]],
        ]
    )
    assert normalised_entropy(w) == pytest.approx((np.log(2) / np.log(3) + 2) / 4)


def test_undefined_reasons_name_the_right_case():
    """Antidiagonal truth on a full 2 x 2 attention: every measure is defined (None). An
    all-zero truth has no true edge at all; a non-square attention whose targets have more
    candidates than true sources leaves top-k defined."""
    beta = np.array([[0.2, 0.8], [0.6, 0.4]])
    truth = np.array([[0.0, 1.0], [1.0, 0.0]])
    for measure in ("beta_spearman", "beta_topk", "beta_auroc"):
        assert undefined_reason(measure, beta, truth) is None
    darnn = np.array([[np.nan, 0.9], [0.9, np.nan]])  # no diagonal: only true cells left
    assert undefined_reason("beta_auroc", darnn, truth) == (
        "every candidate cell is a true edge (one class only)"
    )
    assert undefined_reason("beta_topk", beta, np.zeros((2, 2))) == (
        "no true edge (nothing to recover)"
    )
    wide = np.array([[np.nan, 0.5, 0.5], [0.5, np.nan, 0.5]])
    wide_truth = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    assert undefined_reason("beta_topk", wide, wide_truth) is None
    # target 0: 1 true of 2 candidates; target 1: 1 true of 1 (certain); target 2: no
    # true source. Only target 0 makes top-k defined: drop it and it is certain throughout.
    mixed = np.array([[np.nan, 0.5, 0.5], [1.0, np.nan, np.nan], [np.nan, 0.5, 0.5]])
    mixed_truth = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert undefined_reason("beta_topk", mixed, mixed_truth) is None
    certain = mixed.copy()
    certain[0] = [np.nan, 1.0, np.nan]
    assert undefined_reason("beta_topk", certain, mixed_truth).startswith("true by construction")


def _own_spearman(b: np.ndarray, t: np.ndarray) -> float:
    """Pearson correlation of average ranks (ties share their mean rank)."""
    rb, rt = stats.rankdata(b), stats.rankdata(t)
    return float(np.corrcoef(rb, rt)[0, 1])


def _own_topk(beta: np.ndarray, truth: np.ndarray) -> float:
    """Distinct scores: per target with k true of more than k sources, the share of true
    sources among its k highest; mean over targets."""
    shares = []
    for row, true in zip(beta, truth > 0, strict=True):
        k = int(true.sum())
        if 0 < k < row.size:
            shares.append(true[np.argsort(-row)[:k]].mean())
    return float(np.mean(shares))


def _own_auroc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Share of (positive, negative) pairs ordered right; ties 1/2."""
    pos, neg = scores[positive], scores[~positive]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (pos.size * neg.size))


def _own_lag_topk(alpha: np.ndarray, lag_truth: np.ndarray) -> float:
    shares = []
    for target, source in np.ndindex(lag_truth.shape[:2]):
        true = lag_truth[target, source] > 0
        k = int(true.sum())
        if 0 < k < true.size:
            shares.append(true[np.argsort(-alpha[target, source])[:k]].mean())
    return float(np.mean(shares))


def test_chance_level_is_the_mean_over_every_permuted_truth():
    """The permuted-ground-truth baseline, replayed: all 3! x 3! truths with each target's
    sources permuted, every source measure averaged (mean, not median) over them; the lag
    measure averages, per pair, all 4! orders of its lags in time. The chance level is this
    exact expectation (no random draws). The measures are computed here from their
    definitions (distinct scores)."""
    beta = np.array([[0.1, 0.5, 0.35], [0.7, 0.05, 0.2]])
    truth = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    alpha = np.array(
        [
            [[0.4, 0.3, 0.2, 0.1], [0.1, 0.6, 0.2, 0.1], [0.25, 0.35, 0.3, 0.1]],
            [[0.5, 0.2, 0.2, 0.1], [0.3, 0.1, 0.4, 0.2], [0.15, 0.45, 0.1, 0.3]],
        ]
    )
    lag_truth = np.zeros((2, 3, 4))
    lag_truth[0, 1, 1] = 1.0
    lag_truth[1, 2, [0, 3]] = 0.5
    runs = []
    for first, second in itertools.product(itertools.permutations(range(3)), repeat=2):
        t = np.stack([truth[0, list(first)], truth[1, list(second)]])
        runs.append(
            (
                _own_spearman(beta.ravel(), t.ravel()),
                _own_topk(beta, t),
                _own_auroc(beta.ravel(), t.ravel() > 0),
            )
        )
    spearman, topk, area = np.mean(runs, axis=0)
    lag = []  # per pair with a true lag: its share averaged over every order in time
    for target, source in [(0, 1), (1, 2)]:
        profile = lag_truth[target, source]
        shares = []
        for order in itertools.permutations(range(4)):
            moved = np.zeros_like(lag_truth)
            moved[target, source] = profile[list(order)]
            shares.append(_own_lag_topk(alpha, moved))
        lag.append(np.mean(shares))
    expected = {
        "beta_spearman": spearman,
        "beta_topk": topk,
        "beta_auroc": area,
        "alpha_lag_topk": float(np.mean(lag)),
    }
    got = chance_level(beta, alpha, None, truth, lag_truth)
    assert got == pytest.approx(expected, abs=1e-12)
    records = correctness_with_chance(beta, alpha, None, truth, lag_truth)
    by_measure = {r["measure"]: r for r in records}
    for measure, level in expected.items():
        assert by_measure[measure]["chance"] == pytest.approx(level, abs=1e-12)
        # every measure is defined here, so none carries a reason
        assert by_measure[measure]["undefined_reason"] is None


# --------------------------------------------------------------------------------------
# Understanding suite: parsing and scoring one answer
# --------------------------------------------------------------------------------------


def test_a_label_inside_another_named_label_is_not_counted_twice():
    """'non-stationary' contains 'stationary': a sentence naming only the former names
    exactly one option (parsed, ok), not two."""
    options = ("stationary", "non-stationary")
    parsed = parse_answer("classification", "I think the series is non-stationary.", options)
    assert parsed.ok and parsed.answer == "non-stationary"


def test_arithmetic_reasons_say_which_part_is_missing_or_repeated():
    """A date with no number and a date with two numbers are unparseable for different,
    stated reasons."""
    none = parse_answer("arithmetic_max", "2020-01-02")
    several = parse_answer("arithmetic_max", "3.5 or 4.5 on 2020-01-02")
    assert (none.ok, none.error) == (False, "no number in the reply")
    assert (several.ok, several.error) == (False, "several numbers in the reply")


def test_score_answer_by_hand_at_the_edges():
    """An unparseable arithmetic answer has a wrong date as well as a wrong value. The
    absolute percentage error is |answer - truth| / |truth| x 100: 1.5 for truth 1 is
    50 %, -3 for truth -2 is 50 %; for truth 0 it is undefined (None), not a division."""
    unparsed = score_answer(
        "arithmetic_min", {"value": 1.0, "dates": ["2020-01-02"]}, parse_answer("x", ""), 2
    )
    assert unparsed == {"correct": False, "date_correct": False, "abs_pct_error": None}
    one = score_answer("retrieval", {"value": 1.0}, parse_answer("retrieval", "1.5"), 2)
    assert one["abs_pct_error"] == pytest.approx(50.0) and not one["correct"]
    minus = score_answer("retrieval", {"value": -2.0}, parse_answer("retrieval", "-3"), 0)
    assert minus["abs_pct_error"] == pytest.approx(50.0)
    zero = score_answer("retrieval", {"value": 0.0}, parse_answer("retrieval", "0.00"), 2)
    assert zero == {"correct": True, "date_correct": None, "abs_pct_error": None}


def test_macro_f1_counts_a_label_that_was_only_confused():
    """truth a b c c, predicted b a c c. Label a: tp 0, fp 1, fn 1 -> F1 = 0 (it took part,
    so it counts); b the same; c: tp 2 -> F1 = 1. Macro F1 = (0 + 0 + 1) / 3."""
    truth, predicted = ["a", "b", "c", "c"], ["b", "a", "c", "c"]
    assert f1_macro(truth, predicted, ["a", "b", "c"]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError):  # one prediction per item, or an error
        f1_macro(truth, predicted[:3], ["a", "b", "c"])
    with pytest.raises(ValueError):
        f1_macro(truth[:3], predicted, ["a", "b", "c"])
