"""The generators' equations, recovered from long generated series by least squares.

Every expected coefficient below is written from the benchmark paper's Table 1 (Barić et
al., "Benchmarking Attention-Based Interpretability of Deep Learning in Multivariate Time
Series Predictions", Entropy 2021) and its public generator, NOT read from the generator
module. For each dataset the test regresses every series on ALL series at lags 1..10 (plus
an intercept; the nonlinearity inverted first where there is one) and asserts that

* the declared parents come back at the declared lags with the declared coefficients, and
* every other (source, lag) -- the non-parents -- has a coefficient of ~0;

and that the dataset's stored ground truth (``edges``) is the normalised |coefficients|.
Changing one coefficient, lag, nonlinearity or switching rule of a generator moves at least
one regression coefficient far outside the tolerances.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from tsrate.suites.interpretability.datasets import dataset9, generate

MAX_LAG = 10
LENGTH = 10_000

# target -> {(source, lag): coefficient}, intercept, whether tanh wraps the sum.
# Datasets 2-6 put the noise inside the normalised sum (coefficients here are c / sum|c|).
SPECS: dict[int, dict] = {
    2: {
        "rows": {i: {(i, 3): 1 / 2, (i, 7): 1 / 2} for i in range(5)},
        "tanh": False,
    },
    3: {
        "rows": {i: {(i, 3): 5 / 7, (i, 7): 1 / 7, (i, 9): 1 / 7} for i in range(5)},
        "tanh": True,
    },
    4: {
        "rows": {
            0: {(1, 2): 2 / 5, (1, 5): 1 / 5, (1, 9): 2 / 5},
            1: {(0, 2): 2 / 5, (0, 5): 1 / 5, (0, 9): 2 / 5},
        },
        "tanh": False,
    },
    5: {
        "rows": {
            0: {(0, 3): 1 / 2, (0, 4): 1 / 2},
            1: {(0, 9): 1.0},
            2: {(0, 2): 1 / 2, (0, 7): 1 / 2},
            3: {(0, 8): 8 / 10, (0, 3): 1 / 10, (0, 4): 1 / 10},
            4: {(0, 2): 3 / 9, (0, 5): 2 / 9, (0, 8): 4 / 9},
        },
        "tanh": False,
    },
    6: {
        "rows": {
            0: {(0, 3): 1.0},
            1: {(0, 9): 1.0},
            2: {(0, 2): 1 / 2, (0, 7): 1 / 2},
            3: {(0, 8): 8 / 10, (0, 3): 1 / 10, (0, 4): 1 / 10},
            4: {(0, 2): 3 / 9, (0, 5): 2 / 9, (0, 8): 4 / 9},
        },
        "tanh": True,
    },
    7: {
        "rows": {
            0: {(0, 1): 1 / 4, (0, 5): 3 / 4},
            1: {(0, 2): -1.0},
            2: {(3, 4): 1.0, (1, 1): 1.0},
            3: {(2, 4): -2 / 7, (4, 1): -5 / 7},
            4: {(4, 4): 1.2 / 2.2, (1, 1): 1 / 2.2},
        },
        "intercepts": {1: 1.0, 3: 1.0},
        "tanh": False,
    },
}


def _design(values: np.ndarray, rows: np.ndarray, max_lag: int = MAX_LAG) -> np.ndarray:
    """Columns (source, lag) for source in 0..N-1, lag in 1..max_lag, then an intercept."""
    n = values.shape[1]
    columns = [values[rows - lag, source] for source in range(n) for lag in range(1, max_lag + 1)]
    return np.column_stack([*columns, np.ones(rows.size)])


def _expected_vector(n: int, row: dict, intercept: float) -> np.ndarray:
    out = np.zeros(n * MAX_LAG + 1)
    for (source, lag), coefficient in row.items():
        out[source * MAX_LAG + lag - 1] = coefficient
    out[-1] = intercept
    return out


def _fit(values: np.ndarray, target: int, rows: np.ndarray, tanh: bool) -> np.ndarray:
    """Least trimmed squares: least squares, then refits on the half of the steps with the
    smallest residuals until the set is stable.

    Noise fires on a share f = 0.3 of the steps only, so on the other steps the declared
    equation holds EXACTLY; the trimmed fit finds that exact relation (residuals ~1e-10)
    instead of an estimate blurred by the noise and by the near-collinear lags.
    """
    y = values[rows, target]
    if tanh:
        y = np.arctanh(y)  # the nonlinearity inverted first: arctanh(X_t) is the linear sum
    design = _design(values, rows)
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    keep = np.ones(rows.size, dtype=bool)
    for _ in range(30):
        residual = np.abs(y - design @ coefficients)
        new_keep = residual <= np.quantile(residual, 0.5)
        if np.array_equal(new_keep, keep):
            break
        keep = new_keep
        coefficients, *_ = np.linalg.lstsq(design[keep], y[keep], rcond=None)
    exact = np.abs(y - design @ coefficients)[keep].max()
    assert exact < 1e-7, f"no exact linear relation on the noise-free half (max residual {exact})"
    return coefficients


def _assert_recovered(fitted, expected, label):
    """Declared parents at declared lags with declared coefficients; every other (source, lag)
    -- the non-parents -- exactly 0."""
    worst = int(np.argmax(np.abs(fitted - expected)))
    assert np.abs(fitted - expected).max() < 1e-5, (label, worst, fitted[worst], expected[worst])


@pytest.fixture(autouse=True)
def one_blas_thread():
    """Small least-squares problems run ~50x faster on one BLAS thread on a loaded machine."""
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def generated() -> dict[int, np.ndarray]:
    return {dataset_id: generate(dataset_id, length=LENGTH, seed=17) for dataset_id in range(1, 11)}


@pytest.mark.parametrize("dataset_id", sorted(SPECS))
def test_least_squares_recovers_parents_lags_and_coefficients(dataset_id, generated):
    data = generated[dataset_id]
    spec = SPECS[dataset_id]
    values = data.values
    assert values.shape[1] == len(spec["rows"])
    rows = np.arange(MAX_LAG, len(values))
    for target, row in spec["rows"].items():
        fitted = _fit(values, target, rows, spec["tanh"])
        expected = _expected_vector(values.shape[1], row, spec.get("intercepts", {}).get(target, 0))
        _assert_recovered(fitted, expected, (dataset_id, target))


@pytest.mark.parametrize("dataset_id", sorted(SPECS))
def test_stored_truth_is_the_normalised_absolute_coefficients(dataset_id, generated):
    data = generated[dataset_id]
    stored = {(t, s, lag): w for t, s, lag, w in data.edges}
    expected = {}
    for target, row in SPECS[dataset_id]["rows"].items():
        total = sum(abs(c) for c in row.values())
        for (source, lag), coefficient in row.items():
            expected[(target, source, lag)] = abs(coefficient) / total
    assert stored.keys() == expected.keys()
    for key, weight in expected.items():
        assert stored[key] == pytest.approx(weight)


@pytest.mark.parametrize("dataset_id", [2, 3, 4, 5, 6, 7])
def test_noise_fires_with_frequency_f_and_scale_sigma(dataset_id, generated):
    """The residual of the declared equation is exactly 0 where no noise fired (1 - f of the
    steps) and N(0, sigma / divisor) elsewhere (divisor = sum|c| when the noise is inside)."""
    data, spec = generated[dataset_id], SPECS[dataset_id]
    values = data.values
    rows = np.arange(MAX_LAG, len(values))
    for target, row in spec["rows"].items():
        y = values[rows, target]
        if spec["tanh"]:
            y = np.arctanh(y)
        fitted = _design(values, rows) @ _expected_vector(
            values.shape[1], row, spec.get("intercepts", {}).get(target, 0)
        )
        residual = y - fitted
        exact = np.abs(residual) < 1e-9
        assert exact.mean() == pytest.approx(0.7, abs=0.015), target
        raw_total = {2: 2, 3: 7, 4: 5, 5: [2, 1, 2, 10, 9][target], 6: [1, 1, 2, 10, 9][target]}
        divisor = raw_total.get(dataset_id, 1)
        assert residual[~exact].std() == pytest.approx(0.1 / divisor, rel=0.06), target


def test_dataset1_series_are_constants_plus_noise(generated):
    values = generated[1].values
    rows = np.arange(MAX_LAG, len(values))
    for target in range(values.shape[1]):
        fitted = _fit(values, target, rows, tanh=False)
        level = np.median(values[:, target])
        expected = np.zeros(fitted.size)
        expected[-1] = level
        # no series at any lag drives it: every lag coefficient 0, the intercept is C_n
        _assert_recovered(fitted, expected, target)
        exact = np.abs(values[:, target] - level) < 1e-12
        assert exact.mean() == pytest.approx(0.7, abs=0.015)
        assert (values[~exact, target] - level).std() == pytest.approx(0.1, rel=0.06)


def _switching_rows(values: np.ndarray):
    rows = np.arange(MAX_LAG, len(values))
    regime_a = values[rows - 5, 0] > 0.5
    return rows[regime_a], rows[~regime_a]


def test_dataset8_each_regime_recovers_its_own_equation(generated):
    """X0 and X3 follow one AR rule; X1 and X2 switch on X0_{t-5} > 1/2 (regime A: X1 = X0_{t-5},
    X2 = X0_{t-4}; else X1 = X3_{t-2}, X2 = X3_{t-4}). Fitting each regime separately recovers
    each rule exactly, so a rule reading another series or threshold fails."""
    values = generated[8].values
    regime_a, regime_b = _switching_rows(values)
    assert regime_a.size > 300 and regime_b.size > 300
    cases = [
        (0, np.concatenate([regime_a, regime_b]), {(0, 1): 0.5, (0, 3): 0.5}),
        (3, np.concatenate([regime_a, regime_b]), {(3, 1): 0.5, (3, 4): 0.5}),
        (1, regime_a, {(0, 5): 1.0}),
        (2, regime_a, {(0, 4): 1.0}),
        (1, regime_b, {(3, 2): 1.0}),
        (2, regime_b, {(3, 4): 1.0}),
    ]
    for target, rows, row in cases:
        fitted = _fit(values, target, np.sort(rows), tanh=False)
        _assert_recovered(fitted, _expected_vector(4, row, 0.0), (target, row))
    # the stored truth weights each regime's edges by its share of steps
    share = generated[8].params["share_regime_a"]
    stored = {(t, s, lag): w for t, s, lag, w in generated[8].edges}
    assert stored[(1, 0, 5)] == pytest.approx(share)
    assert stored[(1, 3, 2)] == pytest.approx(1 - share)
    assert stored[(2, 3, 4)] == pytest.approx(1 - share)


def test_dataset10_logistic_maps_and_their_mean(generated):
    """f = 0: X0_t = r X0_{t-3}(1 - X0_{t-3}), X1_t = r X1_{t-5}(1 - X1_{t-5}) and
    X2_t = (X0_{t-3} + X1_{t-5}) / 2 hold exactly; a least-squares fit on x and x^2 of every
    series at lags that are not deterministic functions of each other recovers r, -r, 1/2."""
    data = generate(10, length=LENGTH, r=3.9, seed=17)
    x = data.values
    r = 3.9
    np.testing.assert_allclose(x[3:, 0], r * x[:-3, 0] * (1 - x[:-3, 0]), atol=1e-12)
    np.testing.assert_allclose(x[5:, 1], r * x[:-5, 1] * (1 - x[:-5, 1]), atol=1e-12)
    np.testing.assert_allclose(x[5:, 2], (x[2:-3, 0] + x[:-5, 1]) / 2, atol=1e-12)
    # lags 1..3 of X0 (its 3 interleaved chains) and 1..5 of X1, X2 are functionally free
    lag_sets = {0: range(1, 4), 1: range(1, 6), 2: range(1, 6)}
    rows = np.arange(MAX_LAG, len(x))
    names, columns = [], []
    for source, lags in lag_sets.items():
        for lag, power in itertools.product(lags, (1, 2)):
            names.append((source, lag, power))
            columns.append(x[rows - lag, source] ** power)
    design = np.column_stack([*columns, np.ones(rows.size)])
    declared = {
        0: {(0, 3, 1): r, (0, 3, 2): -r},
        1: {(1, 5, 1): r, (1, 5, 2): -r},
        2: {(0, 3, 1): 0.5, (1, 5, 1): 0.5},
    }
    for target, row in declared.items():
        fitted, *_ = np.linalg.lstsq(design, x[rows, target], rcond=None)
        expected = np.array([row.get(name, 0.0) for name in names] + [0.0])
        np.testing.assert_allclose(fitted, expected, atol=1e-6, err_msg=str(target))
    stored = {(t, s, lag): w for t, s, lag, w in data.edges}
    assert stored == {(0, 0, 3): 1.0, (1, 1, 5): 1.0, (2, 0, 3): 0.5, (2, 1, 5): 0.5}


def _ising_flip_rates(values: np.ndarray, side: int):
    """Per (energy cost dE, state of a far site) the share of flips among updated sites."""
    spins = 2 * values.reshape(len(values), side, side) - 1
    previous, current = spins[:-1], spins[1:]
    neighbours = sum(np.roll(previous, shift, axis) for shift in (1, -1) for axis in (1, 2))
    cost = 2 * previous * neighbours
    flipped = previous != current
    rows, cols = np.indices((side, side))
    black = (rows + cols) % 2 == 0
    far = np.roll(np.roll(previous, 2, 1), 2, 2)  # a site two rows and two columns away
    return cost, flipped, black, far


@pytest.mark.parametrize("temperature", [2.0, 2.75])
def test_dataset9_flip_probability_is_metropolis_on_self_and_four_neighbours(temperature):
    """One step updates one checkerboard sublattice; an updated site flips with probability
    min(1, exp(-dE / T)), dE = 2 s sum(4 neighbours) at the previous step, whatever a far
    site holds (no effect of non-neighbours)."""
    side = 6
    data = dataset9(length=8000, temperature=temperature, side=side, burn_in=100, seed=3)
    cost, flipped, black, far = _ising_flip_rates(data.values, side)
    # the sublattices alternate: black flips only at steps of one parity, white at the other
    steps = np.arange(len(flipped))
    black_flips = (flipped & black).any(axis=(1, 2))
    parity = int(steps[black_flips][0] % 2)
    active_black = steps % 2 == parity
    assert not (flipped & black)[~active_black].any()
    assert not (flipped & ~black)[active_black].any()
    mask = np.where(active_black[:, None, None], black, ~black)
    c, f, z = cost[mask], flipped[mask], far[mask]
    for energy in (-8, -4, 0, 4, 8):
        chosen = c == energy
        if chosen.sum() < 400:
            continue
        expected = min(1.0, np.exp(-energy / temperature))
        for far_state in (-1, 1):
            part = chosen & (z == far_state)
            if part.sum() < 200:
                continue
            rate = f[part].mean()
            tolerance = 4 * np.sqrt(expected * (1 - expected) / part.sum()) + 0.01
            assert abs(rate - expected) < tolerance, (energy, far_state, rate, expected)
    # the stored truth: self and four neighbours at lag 1, 1/5 each
    assert {(t, lag, w) for t, _, lag, w in data.edges if t == 7} == {(7, 1, 0.2)}
    assert sorted(s for t, s, _, _ in data.edges if t == 7) == [1, 6, 7, 8, 13]


def _exact_ising(side: int, temperature: float) -> tuple[float, float]:
    """Mean energy per site and mean |magnetisation| per site of the periodic side x side
    lattice by enumerating all 2^(side^2) configurations (Boltzmann weights)."""
    n = side * side
    states = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2 - 1
    grid = states.reshape(-1, side, side)
    energy = -(grid * np.roll(grid, 1, 1) + grid * np.roll(grid, 1, 2)).sum(axis=(1, 2))
    weights = np.exp(-(energy - energy.min()) / temperature)
    weights /= weights.sum()
    return float(weights @ energy) / n, float(weights @ np.abs(states.mean(1)))


@pytest.mark.parametrize("update", ["checkerboard", "random_site"])
@pytest.mark.parametrize("temperature", [2.0, 2.75])
def test_dataset9_samples_the_boltzmann_distribution(update, temperature):
    """Long-run energy and |magnetisation| per site of a 4 x 4 lattice equal the exact
    Boltzmann averages from enumerating all 65,536 configurations (J = 1, no field)."""
    side = 4
    data = dataset9(
        length=20_000, temperature=temperature, side=side, burn_in=500, seed=8, update=update
    )
    spins = (2 * data.values - 1).reshape(-1, side, side)
    energy = -(spins * np.roll(spins, 1, 1) + spins * np.roll(spins, 1, 2)).sum(axis=(1, 2))
    exact_energy, exact_magnetisation = _exact_ising(side, temperature)
    assert energy.mean() / side**2 == pytest.approx(exact_energy, abs=0.04)
    assert np.abs(spins.mean(axis=(1, 2))).mean() == pytest.approx(exact_magnetisation, abs=0.04)


def test_sensitivity_dataset2_uses_the_reference_lag_sets():
    """The reference code's f and sigma studies: dataset 2 with per-series (coefficient,
    lag) sets [(1,6),(1,9)], [(1,7)], [(1,6),(2,7),(1,8)], [(8,8),(1,9)], [(3,6),(2,9),(1,8)]
    (written here from its Data_preparation notebook), recovered by least squares."""
    from tsrate.suites.interpretability.datasets import REFERENCE_SENSITIVITY_LAGS

    notebook = [[(1, 6), (1, 9)], [(1, 7)], [(1, 6), (2, 7), (1, 8)], [(8, 8), (1, 9)]]
    notebook.append([(3, 6), (2, 9), (1, 8)])
    data = generate(2, length=LENGTH, seed=5, lag_sets=REFERENCE_SENSITIVITY_LAGS)
    rows = np.arange(MAX_LAG, LENGTH)
    for target, terms in enumerate(notebook):
        total = sum(c for c, _ in terms)
        row = {(target, lag): c / total for c, lag in terms}
        fitted = _fit(data.values, target, rows, tanh=False)
        _assert_recovered(fitted, _expected_vector(5, row, 0.0), target)


@pytest.mark.parametrize("dataset_id", [2, 5])
def test_n_study_random_lag_sets_are_what_the_series_follow(dataset_id):
    """The N study: every series gets 1-3 distinct lags from 5..9 with integer coefficients
    1..10; dataset 2 reads each series itself, dataset 5 reads series 0 (row 0 = the
    driver's own lags). The fitted coefficients are the declared ones, nothing else."""
    from tsrate.suites.interpretability.datasets import random_lag_sets

    lag_sets = random_lag_sets(7, seed=2293)
    assert len(lag_sets) == 7 and all(1 <= len(row) <= 3 for row in lag_sets)
    assert all(5 <= lag <= 9 and 1 <= c <= 10 for row in lag_sets for lag, c in row)
    assert len({lag for row in lag_sets for lag, _ in row}) > 2  # not one fixed lag
    data = generate(dataset_id, length=LENGTH, n_series=7, seed=5, lag_sets=lag_sets)
    rows = np.arange(MAX_LAG, LENGTH)
    for target, terms in enumerate(lag_sets):
        source = target if dataset_id == 2 else 0
        total = sum(c for _, c in terms)
        row = {(source, lag): c / total for lag, c in terms}
        fitted = _fit(data.values, target, rows, tanh=False)
        _assert_recovered(fitted, _expected_vector(7, row, 0.0), (dataset_id, target))
