"""Datasets 1-10 of the interpretability suite: shapes, seeding, ground truth, reference checks."""

from __future__ import annotations

import numpy as np
import pytest

from tsrate.suites.interpretability.datasets import (
    ISING_CRITICAL_TEMPERATURE,
    dataset2,
    dataset4,
    dataset8,
    dataset9,
    dataset10,
    generate,
)

SHORT = dict(length=300, burn_in=20)


@pytest.mark.parametrize("dataset_id", range(1, 11))
def test_every_dataset_is_seeded_finite_and_has_normalised_truth(dataset_id):
    params = dict(SHORT)
    if dataset_id == 9:
        params["side"] = 4
    first = generate(dataset_id, seed=3, **params)
    again = generate(dataset_id, seed=3, **params)
    other = generate(dataset_id, seed=4, **params)
    assert first.values.shape == (300, first.n_series)
    assert np.isfinite(first.values).all()
    np.testing.assert_array_equal(first.values, again.values)
    assert not np.array_equal(first.values, other.values)
    matrix = first.interaction_matrix()
    if dataset_id == 1:
        assert first.edges == () and not matrix.any()
    else:
        # every series is driven by something, and each target's weights sum to 1
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0)
        assert all(1 <= lag <= 9 for _, _, lag, _ in first.edges)


def test_dataset2_reference_check_residual_is_exactly_zero_without_noise():
    """Dataset 2: X_t - X_{t-3}/2 - X_{t-7}/2 is exactly 0 on ~70 % of steps (f = 0.3), and
    the rest has std ~0.05 (sigma = 0.1 divided by the coefficient sum 2)."""
    values = dataset2(length=20_000, f=0.3, sigma=0.1, seed=11).values
    residual = values[7:] - 0.5 * values[4:-3] - 0.5 * values[:-7]
    exact = np.abs(residual) < 1e-12
    assert exact.mean() == pytest.approx(0.7, abs=0.01)
    assert residual[~exact].std() == pytest.approx(0.05, rel=0.05)
    assert residual[~exact].mean() == pytest.approx(0.0, abs=0.003)


def test_dataset2_ground_truth_is_the_diagonal_at_lags_3_and_7():
    data = dataset2(n_series=3, **SHORT)
    np.testing.assert_allclose(data.interaction_matrix(), np.eye(3))
    lags = data.lag_tensor(10)
    assert lags[1, 1, 2] == 0.5 and lags[1, 1, 6] == 0.5 and lags.sum() == pytest.approx(3.0)


def test_dataset4_is_two_mutually_driving_series_without_autoregression():
    data = dataset4(f=0.0, **SHORT)
    np.testing.assert_allclose(data.interaction_matrix(), [[0, 1], [1, 0]])
    x = data.values
    predicted = (2 * x[7:-2, 1] + x[4:-5, 1] + 2 * x[:-9, 1]) / 5  # X0_t from X1 at 2, 5, 9
    np.testing.assert_allclose(x[9:, 0], predicted)
    weights = {lag: w for t, s, lag, w in data.edges if t == 0}
    assert weights == {2: 0.4, 5: 0.2, 9: 0.4}


def test_dataset8_switches_rule_on_x0_five_steps_back():
    data = dataset8(length=1200, burn_in=200, seed=0)
    x = data.values
    t = np.arange(10, len(x))
    regime_a = x[t - 5, 0] > 0.5
    expected = np.where(regime_a, x[t - 5, 0], x[t - 2, 3])
    exact = np.abs(x[t, 1] - expected) < 1e-12  # equal wherever no noise fired (~70 %)
    assert exact.mean() == pytest.approx(0.7, abs=0.05)
    assert 0 < regime_a.mean() < 1
    assert data.params["share_regime_a"] == pytest.approx(regime_a.mean(), abs=0.01)


def test_dataset9_ising_magnetisation_around_the_critical_temperature():
    """Ordered below T_c (|m| near Onsager's 0.911 at T = 2), disordered above it."""
    magnetisation = {}
    for temperature in (2.0, ISING_CRITICAL_TEMPERATURE, 2.75):
        spins = 2 * dataset9(length=3000, temperature=temperature, burn_in=500, seed=5).values - 1
        magnetisation[temperature] = np.abs(spins.mean(axis=1)).mean()
    onsager = (1 - np.sinh(2 / 2.0) ** -4) ** 0.125
    assert magnetisation[2.0] == pytest.approx(onsager, abs=0.03)
    assert magnetisation[2.0] > magnetisation[ISING_CRITICAL_TEMPERATURE] > magnetisation[2.75]
    assert magnetisation[2.75] < 0.5


def test_dataset9_steps_depend_only_on_the_previous_step_and_neighbours():
    data = dataset9(length=50, side=4, burn_in=0, seed=1)
    assert set(np.unique(data.values)) <= {0.0, 1.0}
    assert all(lag == 1 and weight == pytest.approx(0.2) for _, _, lag, weight in data.edges)
    assert len(data.edges) == 16 * 5


def test_dataset10_follows_the_logistic_map():
    data = dataset10(r=3.7, **SHORT)
    x = data.values
    np.testing.assert_allclose(x[5:, 1], 3.7 * x[:-5, 1] * (1 - x[:-5, 1]))
    np.testing.assert_allclose(x[5:, 2], (x[2:-3, 0] + x[:-5, 1]) / 2)


@pytest.mark.parametrize(
    ("dataset_id", "params", "message"),
    [
        (2, {"f": 1.5}, "noise frequency"),
        (2, {"length": 0}, "length"),
        (9, {"side": 2}, "lattice side"),
        (10, {"r": 5.0}, "r must"),
        (11, {}, "datasets 1-10"),
    ],
)
def test_bad_parameters_are_named(dataset_id, params, message):
    with pytest.raises(ValueError, match=message):
        generate(dataset_id, **params)
