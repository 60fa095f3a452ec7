"""The interpretability suite's synthetic datasets (tsrate.suites.interpretability.datasets)
rebuilt from their documented definitions, step by step, with the same seed.

Each generator's docstring (and the module's conventions: 10 initial N(0, 1) steps, noise
N(mu, sigma) firing with probability f, ``burn_in`` steps discarded, one
``numpy.random.Generator`` drawing everything in a fixed order) is written out here as a
plain loop over time steps and series, with the equations typed from the docstrings and the
benchmark paper (Bari\u0107 et al. 2021, Table 1), not read from the module. The series must
match to rounding, and the declared ground truth (``edges``) must be the normalised
|coefficients| typed by hand. Short series (tens of steps), a nonzero noise mean and a
high firing rate make every coefficient, lag, divisor, noise term and edge weight visible.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep6_interpretability.json): a changed coefficient, lag, initial length,
comparison or bound in the generators changes a checked number. The tests are tied to the
draw order (a harmless reordering of the draws fails them, as for the understanding
generators' sweep tests).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tsrate.suites.interpretability import datasets as ds

L, B = 40, 6  # returned steps, burn-in: 46 steps in all, 36 after the 10 initial ones
F, MU, SIGMA = 0.5, 0.2, 0.3
NOISE = dict(f=F, mu=MU, sigma=SIGMA)


def draws(seed: int, rows: int, n: int, f: float = F, mu: float = MU, sigma: float = SIGMA):
    """The documented draw order of datasets 2-8: rows x n initial N(0, 1) values (the first
    10 rows used), then a Bernoulli(f) firing matrix, then a N(mu, sigma) matrix."""
    rng = np.random.default_rng(seed)
    init = rng.normal(0.0, 1.0, (10, n))
    fires = rng.random((rows, n)) < f
    normal = rng.normal(mu, sigma, (rows, n))
    eps = np.where(fires, normal, 0.0)
    x = np.zeros((rows, n))
    x[:10] = init
    return x, eps, fires


def rebuild(seed, n, step, length=L, burn_in=B, **noise):
    """Run ``step(x, t, e)`` (which writes row t) from t = 10 to the end; return the tail."""
    rows = max(length + burn_in, 10)
    x, eps, _ = draws(seed, rows, n, **noise)
    for t in range(10, rows):
        step(x, t, eps[t])
    return x[rows - length :]


def edge_dict(edges):
    out = {}
    for target, source, lag, weight in edges:
        key = (int(target), int(source), int(lag))
        assert key not in out, f"edge {key} listed twice"
        out[key] = float(weight)
    return out


def assert_edges(actual, expected):
    got, want = edge_dict(actual), edge_dict(expected)
    assert sorted(got) == sorted(want)
    for key, weight in want.items():
        assert got[key] == pytest.approx(weight, rel=1e-12, abs=1e-15), key


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-11, atol=1e-12)


# ---------------------------------------------------------------- constants and checks


def test_ising_critical_temperature_is_onsagers():
    # 2 / ln(1 + sqrt 2) = 2.269185314213022... (Onsager 1944)
    assert ds.ISING_CRITICAL_TEMPERATURE == pytest.approx(2.269185314213022, rel=1e-15)
    assert ds.INIT_STEPS == 10


@pytest.mark.parametrize(
    "params",
    [
        dict(length=1, burn_in=0),
        dict(length=2, burn_in=0, f=0.0, sigma=0.0),
        dict(length=2, burn_in=0, f=1.0),
        dict(length=2, burn_in=0, n_series=1),
    ],
)
def test_bounds_of_the_accepted_parameters_are_accepted(params):
    data = ds.dataset2(**params)
    assert data.values.shape == (params["length"], params.get("n_series", 5))


@pytest.mark.parametrize(
    "params",
    [
        dict(length=0),
        dict(burn_in=-1),
        dict(f=-0.01),
        dict(f=1.01),
        dict(sigma=-0.1),
        dict(n_series=0),
    ],
)
def test_just_outside_the_bounds_is_refused(params):
    with pytest.raises(ValueError):
        ds.dataset2(**{"length": 2, "burn_in": 0, **params})


@pytest.mark.parametrize(
    ("lag_sets", "ok"),
    [
        ([[(1, 1.0)], [(1, -2.0)]], True),
        ([[(0, 1.0)], [(1, 1.0)]], False),
        ([[(1, 0.0)], [(1, 1.0)]], False),
        ([[], [(1, 1.0)]], False),
        ([[(1, 1.0)]], False),
    ],
)
def test_lag_set_checks(lag_sets, ok):
    if ok:
        assert ds.dataset2(length=2, burn_in=0, n_series=2, lag_sets=lag_sets).n_series == 2
    else:
        with pytest.raises(ValueError):
            ds.dataset2(length=2, burn_in=0, n_series=2, lag_sets=lag_sets)


def test_dataset9_and_10_bounds():
    assert ds.dataset9(length=2, burn_in=0, side=3).n_series == 9
    assert ds.dataset9(length=2, burn_in=0, side=3, temperature=1e-3).n_series == 9
    for bad in (dict(side=2), dict(temperature=0.0), dict(update="x")):
        with pytest.raises(ValueError):
            ds.dataset9(length=2, burn_in=0, **{"side": 3, **bad})
    assert ds.dataset10(length=2, burn_in=0, r=4.0).n_series == 3
    assert ds.dataset10(length=2, burn_in=0, r=1e-9).n_series == 3
    for r in (0.0, 4.0001):
        with pytest.raises(ValueError):
            ds.dataset10(length=2, burn_in=0, r=r)


# ---------------------------------------------------------------- Dataset helpers


def test_interaction_matrix_and_lag_tensor_by_hand():
    edges = ((0, 1, 1, 0.25), (0, 1, 4, 0.5), (0, 0, 2, 0.25), (1, 1, 3, 1.0))
    data = ds.Dataset(0, np.zeros((5, 2)), edges, {})
    assert data.n_series == 2
    np.testing.assert_array_equal(data.interaction_matrix(), [[0.25, 0.75], [0.0, 1.0]])
    tensor = data.lag_tensor(3)  # lag 4 is beyond the window: dropped
    assert tensor.shape == (2, 2, 3)
    expected = np.zeros((2, 2, 3))
    expected[0, 1, 0], expected[0, 0, 1], expected[1, 1, 2] = 0.25, 0.25, 1.0
    np.testing.assert_array_equal(tensor, expected)
    full = data.lag_tensor(4)
    assert full[0, 1, 3] == 0.5 and full.sum() == pytest.approx(2.0)
    same_step = ds.Dataset(0, np.zeros((5, 2)), ((0, 1, 0, 1.0),), {})
    assert not same_step.lag_tensor(3).any()  # lag 0 is not in 1..window: dropped


@pytest.mark.parametrize("dataset_id", range(1, 11))
def test_each_dataset_carries_its_number(dataset_id):
    extra = {"side": 3} if dataset_id == 9 else {}
    assert ds.generate(dataset_id, length=2, burn_in=0, **extra).dataset_id == dataset_id


def test_noise_fires_only_strictly_below_f():
    """Noise fires where the uniform draw is < f: with f equal to one draw (read from the
    seed), that (series, step) stays quiet."""
    rng = np.random.default_rng(21)
    rng.normal(0.0, 1.0, (10, 2))
    u = rng.random((L + B, 2))
    f = float(u[20, 1])

    def step(x, t, e):
        for i in range(2):
            x[t, i] = (x[t - 3, i] + x[t - 7, i] + e[i]) / 2

    data = ds.dataset2(length=L, n_series=2, burn_in=B, seed=21, f=f, mu=MU, sigma=SIGMA)
    x, eps, fires = draws(21, L + B, 2, f=f)
    assert not fires[20, 1] and eps[20, 1] == 0.0
    close(data.values, rebuild(21, 2, step, f=f, mu=MU, sigma=SIGMA))


# ---------------------------------------------------------------- datasets 1-8, step by step


def test_dataset1_is_a_constant_level_plus_noise():
    rng = np.random.default_rng(7)
    level = rng.normal(0.0, 1.0, 3)
    fires = rng.random((L + B, 3)) < F
    eps = np.where(fires, rng.normal(MU, SIGMA, (L + B, 3)), 0.0)
    data = ds.dataset1(length=L, n_series=3, burn_in=B, seed=7, **NOISE)
    close(data.values, (level + eps)[B:])
    assert data.edges == () and not data.interaction_matrix().any()


def test_dataset2_default_lags_3_and_7_halved():
    def step(x, t, e):
        for i in range(3):
            x[t, i] = (x[t - 3, i] + x[t - 7, i] + e[i]) / 2

    data = ds.dataset2(length=L, n_series=3, burn_in=B, seed=1, **NOISE)
    close(data.values, rebuild(1, 3, step))
    assert_edges(data.edges, [(i, i, lag, 0.5) for i in range(3) for lag in (3, 7)])


def test_dataset2_lag_sets_divide_by_the_absolute_coefficient_sum():
    lag_sets = [[(2, -1.0), (5, 3.0)], [(1, 0.5)]]

    def step(x, t, e):
        x[t, 0] = (-1.0 * x[t - 2, 0] + 3.0 * x[t - 5, 0] + e[0]) / 4.0
        x[t, 1] = (0.5 * x[t - 1, 1] + e[1]) / 0.5

    data = ds.dataset2(length=L, n_series=2, burn_in=B, seed=2, lag_sets=lag_sets, **NOISE)
    close(data.values, rebuild(2, 2, step))
    assert_edges(data.edges, [(0, 0, 2, 0.25), (0, 0, 5, 0.75), (1, 1, 1, 1.0)])


def test_dataset3_tanh_of_5_1_1_over_7():
    def step(x, t, e):
        for i in range(2):
            x[t, i] = math.tanh((5 * x[t - 3, i] + x[t - 7, i] + x[t - 9, i] + e[i]) / 7)

    data = ds.dataset3(length=L, n_series=2, burn_in=B, seed=3, **NOISE)
    close(data.values, rebuild(3, 2, step))
    truth = [(i, i, lag, w) for i in range(2) for lag, w in ((3, 5 / 7), (7, 1 / 7), (9, 1 / 7))]
    assert_edges(data.edges, truth)


def test_dataset4_two_series_drive_each_other():
    def step(x, t, e):
        x0, x1 = x[:, 0], x[:, 1]
        x[t, 0] = (2 * x1[t - 2] + x1[t - 5] + 2 * x1[t - 9] + e[0]) / 5
        x[t, 1] = (2 * x0[t - 2] + x0[t - 5] + 2 * x0[t - 9] + e[1]) / 5

    data = ds.dataset4(length=L, burn_in=B, seed=4, **NOISE)
    close(data.values, rebuild(4, 2, step))
    truth = [(1 - s, s, lag, w) for s in range(2) for lag, w in ((2, 0.4), (5, 0.2), (9, 0.4))]
    assert_edges(data.edges, truth)


def driven(x, t):
    """Datasets 5/6 rows 1-4 (Table 1), every term reading series 0, before the noise."""
    x0 = x[:, 0]
    return [
        (x0[t - 9], 1),
        (x0[t - 2] + x0[t - 7], 2),
        (8 * x0[t - 8] + x0[t - 3] + x0[t - 4], 10),
        (3 * x0[t - 2] + 2 * x0[t - 5] + 4 * x0[t - 8], 9),
    ]


DRIVEN_TRUTH = [
    (1, 0, 9, 1.0),
    (2, 0, 2, 0.5),
    (2, 0, 7, 0.5),
    (3, 0, 8, 0.8),
    (3, 0, 3, 0.1),
    (3, 0, 4, 0.1),
    (4, 0, 2, 3 / 9),
    (4, 0, 5, 2 / 9),
    (4, 0, 8, 4 / 9),
]


def test_dataset5_driver_and_driven_series():
    def step(x, t, e):
        rows = driven(x, t)
        x[t, 0] = (x[t - 3, 0] + x[t - 4, 0] + e[0]) / 2
        for i, (value, total) in enumerate(rows, start=1):
            x[t, i] = (value + e[i]) / total

    data = ds.dataset5(length=L, burn_in=B, seed=5, **NOISE)
    close(data.values, rebuild(5, 5, step))
    assert_edges(data.edges, [(0, 0, 3, 0.5), (0, 0, 4, 0.5), *DRIVEN_TRUTH])


def test_dataset5_fewer_series_take_the_first_rows():
    def step(x, t, e):
        x[t, 0] = (x[t - 3, 0] + x[t - 4, 0] + e[0]) / 2
        x[t, 1] = (x[t - 9, 0] + e[1]) / 1
        x[t, 2] = (x[t - 2, 0] + x[t - 7, 0] + e[2]) / 2

    data = ds.dataset5(length=L, n_series=3, burn_in=B, seed=8, **NOISE)
    close(data.values, rebuild(8, 3, step))
    assert len(data.edges) == 5


def test_dataset5_lag_sets_read_series_zero():
    lag_sets = [[(1, 2.0)], [(4, 1.0), (6, -3.0)]]

    def step(x, t, e):
        x[t, 0] = (2.0 * x[t - 1, 0] + e[0]) / 2.0
        x[t, 1] = (x[t - 4, 0] - 3.0 * x[t - 6, 0] + e[1]) / 4.0

    data = ds.dataset5(length=L, n_series=2, burn_in=B, seed=9, lag_sets=lag_sets, **NOISE)
    close(data.values, rebuild(9, 2, step))
    assert_edges(data.edges, [(0, 0, 1, 1.0), (1, 0, 4, 0.25), (1, 0, 6, 0.75)])


def test_dataset6_tanh_with_the_single_lag_driver():
    def step(x, t, e):
        rows = driven(x, t)
        x[t, 0] = math.tanh((x[t - 3, 0] + e[0]) / 1)
        for i, (value, total) in enumerate(rows, start=1):
            x[t, i] = math.tanh((value + e[i]) / total)

    data = ds.dataset6(length=L, burn_in=B, seed=6, **NOISE)
    close(data.values, rebuild(6, 5, step))
    assert_edges(data.edges, [(0, 0, 3, 1.0), *DRIVEN_TRUTH])


@pytest.mark.parametrize("generator", [ds.dataset5, ds.dataset6])
def test_extra_driven_series_follow_their_declared_edges(generator):
    """N > 5: series 5.. get seeded random rows; wherever no noise fired (the firing matrix
    rebuilt from the seed), each is exactly its declared edges' weighted sum of series 0 (the
    coefficients are positive, so weight = c / sum c), through tanh for dataset 6."""
    n, seed = 9, 11
    data = generator(length=L, n_series=n, burn_in=B, seed=seed, **NOISE)
    _, _, fires = draws(seed, L + B, n)
    x, quiet = data.values, ~fires[B:]
    by_target: dict[int, list] = {}
    for target, source, lag, weight in data.edges:
        assert source == 0
        by_target.setdefault(target, []).append((lag, weight))
    for i in range(5, n):
        terms = by_target[i]
        assert 1 <= len(terms) <= 3 and all(2 <= lag <= 9 for lag, _ in terms)
        total = sum(w for _, w in terms)
        assert total == pytest.approx(1.0)
        for t in range(9, L):
            value = sum(w * x[t - lag, 0] for lag, w in terms)
            if generator is ds.dataset6:
                value = math.tanh(value)
            if quiet[t, i]:
                assert x[t, i] == pytest.approx(value, rel=1e-10, abs=1e-12)


def test_random_rows_cover_their_documented_ranges():
    """Over many seeds: N-study lag sets draw 1-3 distinct lags from 5..9 with integer
    coefficients 1..10; the extra driven rows of datasets 5/6 draw 1-3 distinct lags from
    2..9 (each possible value turns up, none outside)."""
    sizes, lags, coefs = set(), set(), set()
    for seed in range(60):
        for row in ds.random_lag_sets(6, seed):
            sizes.add(len(row))
            assert len({lag for lag, _ in row}) == len(row)
            lags |= {lag for lag, _ in row}
            coefs |= {c for _, c in row}
    assert sizes == {1, 2, 3} and lags == set(range(5, 10)) and coefs == set(range(1, 11))
    sizes, lags, weights = set(), set(), set()
    for seed in range(40):
        data = ds.dataset5(length=1, burn_in=0, n_series=8, seed=seed, f=0.0)
        rows: dict[int, list] = {}
        for target, _, lag, weight in data.edges:
            if target >= 5:
                rows.setdefault(target, []).append(lag)
                weights.add(round(weight, 12))
        for row in rows.values():
            sizes.add(len(row))
            assert len(set(row)) == len(row)
            lags |= set(row)
    assert sizes == {1, 2, 3} and lags == set(range(2, 10))
    assert 1.0 in weights  # a single-lag row
    assert round(1 / 11, 12) in weights  # coefficient 1 beside 10 (1..10 reach both ends)


def test_random_lag_sets_are_what_dataset2_and_5_follow():
    sets = ds.random_lag_sets(2, 4)
    data = ds.dataset2(length=L, n_series=2, burn_in=B, seed=4, lag_sets=sets, **NOISE)

    def step(x, t, e):
        for i, row in enumerate(sets):
            total = sum(abs(c) for _, c in row)
            x[t, i] = (sum(c * x[t - lag, i] for lag, c in row) + e[i]) / total

    close(data.values, rebuild(4, 2, step))


def test_dataset7_custom_var_with_noise_outside():
    def step(x, t, e):
        x[t, 0] = (x[t - 1, 0] + 3 * x[t - 5, 0]) / 4 + e[0]
        x[t, 1] = 1 - x[t - 2, 0] + e[1]
        x[t, 2] = x[t - 4, 3] + x[t - 1, 1] + e[2]
        x[t, 3] = 1 - (2 * x[t - 4, 2] + 5 * x[t - 1, 4]) / 7 + e[3]
        x[t, 4] = (1.2 * x[t - 4, 4] + x[t - 1, 1]) / 2.2 + e[4]

    data = ds.dataset7(length=L, burn_in=B, seed=7, **NOISE)
    close(data.values, rebuild(7, 5, step))
    truth = [
        (0, 0, 1, 0.25),
        (0, 0, 5, 0.75),
        (1, 0, 2, 1.0),
        (2, 3, 4, 0.5),
        (2, 1, 1, 0.5),
        (3, 2, 4, 2 / 7),
        (3, 4, 1, 5 / 7),
        (4, 4, 4, 1.2 / 2.2),
        (4, 1, 1, 1 / 2.2),
    ]
    assert_edges(data.edges, truth)
    tensor = data.lag_tensor(5)  # lag 1 (index 0) and lag 5 (index 4) both kept
    assert tensor[0, 0, 0] == pytest.approx(0.25) and tensor[0, 0, 4] == pytest.approx(0.75)
    assert tensor.sum() == pytest.approx(5.0)


def dataset8_rebuild(seed, threshold, length=L, burn_in=B):
    rows = max(length + burn_in, 10)
    x, eps, _ = draws(seed, rows, 4)
    regime = np.zeros(rows, dtype=bool)
    for t in range(10, rows):
        e = eps[t]
        x[t, 0] = (x[t - 1, 0] + x[t - 3, 0]) / 2 + e[0]
        x[t, 3] = (x[t - 1, 3] + x[t - 4, 3]) / 2 + e[3]
        if x[t - 5, 0] > threshold:  # strictly above: regime A
            regime[t] = True
            x[t, 1] = x[t - 5, 0] + e[1]
            x[t, 2] = x[t - 4, 0] + e[2]
        else:
            x[t, 1] = x[t - 2, 3] + e[1]
            x[t, 2] = x[t - 4, 3] + e[2]
    return x[rows - length :], regime[rows - length :].mean()


def dataset8_truth(share):
    truth = [(0, 0, 1, 0.5), (0, 0, 3, 0.5), (3, 3, 1, 0.5), (3, 3, 4, 0.5)]
    x1 = [(1, 0, 5, share), (1, 3, 2, 1 - share)]
    x2 = [(2, 0, 4, share / 2), (2, 0, 5, share / 2), (2, 3, 4, 1 - share)]
    return truth + [e for e in x1 + x2 if e[3] > 0]


@pytest.mark.parametrize("threshold", [0.5, 0.1, -1e9, 1e9])
def test_dataset8_switching_rule_and_regime_weighted_truth(threshold):
    data = ds.dataset8(length=L, burn_in=10, seed=8, threshold=threshold, **NOISE)
    values, share = dataset8_rebuild(8, threshold, burn_in=10)  # every returned step ruled
    close(data.values, values)
    assert data.params["share_regime_a"] == pytest.approx(share)
    if threshold == 1e9:
        assert share == 0.0
    elif threshold == -1e9:
        assert share == 1.0
    else:
        assert 0 < share < 1
    assert_edges(data.edges, dataset8_truth(share))
    np.testing.assert_allclose(data.interaction_matrix().sum(axis=1), 1.0)


def test_dataset8_a_value_equal_to_the_threshold_is_regime_b():
    """The rule is X0_{t-5} > threshold: at equality the step is regime B. With the
    threshold set to initial value X0_5 (read from the seed), step 10 sits exactly on it."""
    x, _, _ = draws(8, L + B, 4)
    threshold = float(x[5, 0])
    data = ds.dataset8(length=L, burn_in=0, seed=8, threshold=threshold, **NOISE)
    values, share = dataset8_rebuild(8, threshold, burn_in=0)
    close(data.values, values)
    assert data.params["share_regime_a"] == pytest.approx(share)
    assert values[5, 0] == threshold  # the rebuilt step 10 took regime B on the tie


@pytest.mark.parametrize("dataset_id", [2, 3, 4, 5, 6, 7, 8])
def test_series_shorter_than_the_initial_steps_are_the_initial_draws(dataset_id):
    """length + burn_in < 10: the returned values are the last ``length`` of the 10 initial
    N(0, 1) draws, nothing iterated."""
    data = ds.generate(dataset_id, length=3, burn_in=2, seed=12, **NOISE)
    x, _, _ = draws(12, 10, data.n_series)
    close(data.values, x[7:10])


def test_dataset10_short_series_are_the_uniform_initial_draws():
    data = ds.dataset10(length=3, burn_in=2, seed=12)
    rng = np.random.default_rng(12)
    close(data.values, rng.uniform(0.0001, 0.9999, (10, 3))[7:])


# ---------------------------------------------------------------- datasets 9 and 10


def ising_checkerboard(seed, side, length, burn_in, temperature):
    """Metropolis by checkerboard half-sweeps, site by site (the docstring's rule)."""
    rng = np.random.default_rng(seed)
    spins = np.where(rng.random((side, side)) < 0.5, 1, -1)
    out = []
    for t in range(length + burn_in):
        u = rng.random((side, side))
        new = spins.copy()
        for i in range(side):
            for j in range(side):
                if (i + j) % 2 != t % 2:  # even steps: black sites (i + j even)
                    continue
                nb = (
                    spins[(i - 1) % side, j]
                    + spins[(i + 1) % side, j]
                    + spins[i, (j - 1) % side]
                    + spins[i, (j + 1) % side]
                )
                delta = 2.0 * spins[i, j] * nb
                if u[i, j] < math.exp(-delta / temperature):
                    new[i, j] = -spins[i, j]
        spins = new
        if t >= burn_in:
            out.append((spins.ravel() + 1) / 2)
    return np.array(out)


def ising_random_site(seed, side, length, burn_in, temperature):
    rng = np.random.default_rng(seed)
    spins = np.where(rng.random((side, side)) < 0.5, 1, -1)
    out = []
    for t in range(length + burn_in):
        sites = rng.integers(0, side, size=(side * side, 2))
        u = rng.random(side * side)
        for (i, j), draw in zip(sites, u, strict=True):
            nb = (
                spins[(i - 1) % side, j]
                + spins[(i + 1) % side, j]
                + spins[i, (j - 1) % side]
                + spins[i, (j + 1) % side]
            )
            delta = 2 * spins[i, j] * nb
            if draw < math.exp(-delta / temperature):
                spins[i, j] = -spins[i, j]
        if t >= burn_in:
            out.append((spins.ravel() + 1) / 2)
    return np.array(out)


def ising_truth(side):
    truth = []
    for r in range(side):
        for c in range(side):
            target = r * side + c
            for nr, nc in ((r, c), (r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                truth.append((target, (nr % side) * side + nc % side, 1, 0.2))
    return truth


@pytest.mark.parametrize("temperature", [2.0, 3.5])
def test_dataset9_checkerboard_site_by_site(temperature):
    data = ds.dataset9(length=12, temperature=temperature, side=4, burn_in=3, seed=9)
    np.testing.assert_array_equal(data.values, ising_checkerboard(9, 4, 12, 3, temperature))
    assert_edges(data.edges, ising_truth(4))
    assert "update" not in data.params


@pytest.mark.parametrize(("temperature", "burn_in"), [(2.0, 2), (3.5, 2), (2.0, 0)])
def test_dataset9_random_site_updates(temperature, burn_in):
    data = ds.dataset9(
        length=8, temperature=temperature, side=3, burn_in=burn_in, seed=10, update="random_site"
    )
    expected = ising_random_site(10, 3, 8, burn_in, temperature)
    np.testing.assert_array_equal(data.values, expected)
    assert_edges(data.edges, ising_truth(3))
    assert data.params["update"] == "random_site"


def test_dataset10_logistic_maps_step_by_step():
    rng = np.random.default_rng(13)
    rows = L + B
    x = np.zeros((rows, 3))
    x[:10] = rng.uniform(0.0001, 0.9999, (10, 3))
    fires = rng.random((rows, 3)) < 0.4
    eps = np.where(fires, rng.normal(0.0, 0.01, (rows, 3)), 0.0)
    r = 3.7
    for t in range(10, rows):
        x[t, 0] = r * x[t - 3, 0] * (1 - x[t - 3, 0]) + eps[t, 0]
        x[t, 1] = r * x[t - 5, 1] * (1 - x[t - 5, 1]) + eps[t, 1]
        x[t, 2] = (x[t - 3, 0] + x[t - 5, 1]) / 2 + eps[t, 2]
    data = ds.dataset10(length=L, r=r, f=0.4, sigma=0.01, burn_in=B, seed=13)
    close(data.values, x[rows - L :])
    assert_edges(data.edges, [(0, 0, 3, 1.0), (1, 1, 5, 1.0), (2, 0, 3, 0.5), (2, 1, 5, 0.5)])


def test_dataset10_default_r_and_no_noise():
    data = ds.dataset10(length=L, burn_in=10, seed=14)  # no initial draw returned
    x = data.values
    assert data.params["r"] == 3.56996 and data.params["f"] == 0.0
    close(x[5:, 1], 3.56996 * x[:-5, 1] * (1 - x[:-5, 1]))
    close(x[3:, 0], 3.56996 * x[:-3, 0] * (1 - x[:-3, 0]))


def test_defaults_are_the_papers():
    """Defaults typed from the paper: f = 0.3, mu = 0, sigma = 0.1, burn-in 1000, length
    20,000, five series, dataset 8's threshold 0.5 (read back from params / signatures)."""
    import inspect

    for dataset_id, generator in ds.GENERATORS.items():
        defaults = {k: p.default for k, p in inspect.signature(generator).parameters.items()}
        assert defaults["length"] == 20_000 and defaults["burn_in"] == 1000
        assert defaults["seed"] == 0
        if dataset_id <= 8:
            assert (defaults["f"], defaults["mu"], defaults["sigma"]) == (0.3, 0.0, 0.1)
        if "n_series" in defaults:
            assert defaults["n_series"] == 5
    assert inspect.signature(ds.dataset8).parameters["threshold"].default == 0.5
    assert inspect.signature(ds.dataset9).parameters["side"].default == 10
    assert inspect.signature(ds.dataset10).parameters["sigma"].default == 0.1


def test_reference_sensitivity_lag_sets_are_the_notebooks():
    """The reference code's f and sigma studies (its Data_preparation notebook): per series
    (coefficient, lag) [(1,6),(1,9)], [(1,7)], [(1,6),(2,7),(1,8)], [(8,8),(1,9)],
    [(3,6),(2,9),(1,8)], here as (lag, coefficient)."""
    notebook = [[(1, 6), (1, 9)], [(1, 7)], [(1, 6), (2, 7), (1, 8)], [(8, 8), (1, 9)]]
    notebook.append([(3, 6), (2, 9), (1, 8)])
    expected = [[(lag, float(c)) for c, lag in row] for row in notebook]
    assert [list(row) for row in ds.REFERENCE_SENSITIVITY_LAGS] == expected


def test_one_bad_term_in_a_lag_set_is_refused():
    for row in ([(1, 1.0), (0, 1.0)], [(2, 1.0), (3, 0.0)]):
        with pytest.raises(ValueError):
            ds.dataset2(length=2, burn_in=0, n_series=2, lag_sets=[[(1, 1.0)], row])


def test_random_rows_are_drawn_from_their_own_seed_streams():
    """The N study's lag sets come from a Generator seeded with [seed, 9], datasets 5/6's
    extra rows from one seeded with [seed, 5] (streams apart from the series' own draws):
    per series, the number of lags (1-3), the distinct lags, then one coefficient 1..10 per
    lag; the extra rows' lags sorted."""
    for seed in (0, 3):
        rng = np.random.default_rng([seed, 9])
        expected = []
        for _ in range(6):
            lags = rng.choice(np.arange(5, 10), size=int(rng.integers(1, 4)), replace=False)
            expected.append(tuple((int(lag), float(rng.integers(1, 11))) for lag in lags))
        assert ds.random_lag_sets(6, seed) == tuple(expected)
        rng = np.random.default_rng([seed, 5])
        rows = []
        for _ in range(5, 8):
            lags = rng.choice(np.arange(2, 10), size=int(rng.integers(1, 4)), replace=False)
            rows.append([(int(lag), float(rng.integers(1, 11))) for lag in sorted(lags)])
        data = ds.dataset5(length=1, burn_in=0, n_series=8, seed=seed, f=0.0)
        for target, row in enumerate(rows, start=5):
            total = sum(c for _, c in row)
            truth = [(target, 0, lag, c / total) for lag, c in row]
            assert_edges([e for e in data.edges if e[0] == target], truth)


@pytest.mark.parametrize("dataset_id", range(1, 11))
def test_params_record_what_generated_the_series(dataset_id):
    """``params`` (stored as the variant's JSON) name the real series count and the
    arguments given."""
    extra = {"side": 3} if dataset_id == 9 else {}
    data = ds.generate(dataset_id, length=4, burn_in=1, seed=5, **extra)
    assert data.params["n_series"] == data.values.shape[1]
    assert data.params["length"] == 4 and data.params["seed"] == 5
    expected_n = {1: 5, 2: 5, 3: 5, 4: 2, 5: 5, 6: 5, 7: 5, 8: 4, 9: 9, 10: 3}
    assert data.params["n_series"] == expected_n[dataset_id]


def test_dataset9_at_a_tiny_temperature_accepts_every_drop_without_an_overflow_warning():
    """exp(-dE / T) overflows at T = 0.01 for dE < 0: the flip is accepted (probability
    min(1, inf) = 1), and the step must not print numpy's overflow warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = ds.dataset9(length=6, burn_in=2, side=4, temperature=0.01, seed=3)
    assert np.isin(data.values, (0.0, 1.0)).all()
