"""Tests written for the mutation sweep of the rating-stability code
(tests/planted/sweep_stability_marts.json): the WRS, APE and PIE scores resampled over window
dates (``tsrate.methods.stability``).

Every expectation is computed independently of the product: SciPy's Student t-test on
physically replicated rows, NumPy written out from the definitions, or small examples
worked by hand (derivations in the comments).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from tests.support.sweep_stability import (
    DATES,
    DAYS,
    LEVELS,
    rows,
)
from tsrate.methods.stability import (
    aggregate_distributions,
    date_positions,
    effects_resampled,
    wrs_resampled,
)

# --------------------------------------------------------------------------- helpers


def scipy_wrs(frame: pd.DataFrame, group: str, levels: pd.DataFrame = LEVELS) -> dict:
    """WRS per (system, perturbation) from the definition: every unordered pair of groups of
    one system x perturbation, SciPy's pooled two-sided Student t-test, the level's weight
    summed when p < 1 - confidence. Both groups constant: rejected iff the values differ."""
    out = {}
    for (system, pert), block in frame.groupby(["system_id", "perturbation_id"], sort=True):
        values = {g: b["y"].to_numpy(float) for g, b in block.groupby(group, sort=True)}
        total = 0.0
        for a, b in itertools.combinations(sorted(values), 2):
            x, y = values[a], values[b]
            if np.ptp(x) == 0 and np.ptp(y) == 0:
                rejected = [x[0] != y[0]] * len(levels)
            else:
                p = sps.ttest_ind(x, y, equal_var=True).pvalue
                rejected = [p < 1 - c for c in levels["confidence"]]
            total += sum(w for w, r in zip(levels["weight"], rejected, strict=True) if r)
        out[(system, pert)] = round(total, 10)
    return out


def product_wrs(frame: pd.DataFrame, multiplicities: np.ndarray) -> tuple[dict, np.ndarray]:
    keys, point, boot = wrs_resampled(frame, "grp", LEVELS, None, DAYS, multiplicities, "y")
    labels = list(zip(keys["system_id"], keys["perturbation_id"], strict=True))
    return dict(zip(labels, point, strict=True)), boot


def band_pair(n: int, t_target: float, replicate: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Two groups of n values whose Student t (after copying every row ``replicate`` times)
    is exactly ``t_target``: b is a fixed spread, a the same shifted by delta, and t is
    linear in delta (the pooled variance does not depend on it)."""
    base = np.linspace(-1.0, 1.0, n) ** 3 + 0.05 * np.arange(n) % 0.3
    x = np.repeat(base, replicate)
    unit = sps.ttest_ind(x + 1.0, x, equal_var=True).statistic  # t for delta = 1
    delta = t_target / unit
    return base + delta, base


# --------------------------------------------------------------------------- WRS resampled


def test_wrs_pairs_stay_within_one_system_when_there_is_one_perturbation():
    """Two systems, one perturbation: each system's groups are compared only with its own
    (the pairs' blocks are system x perturbation), as SciPy on each system's rows."""
    rng = np.random.default_rng(4)
    data = []
    for system, shift in (("s1", 0.0), ("s2", 0.9)):
        for g, offset in (("g1", 0.0), ("g2", shift), ("g3", 2 * shift)):
            data += rows(system, "P1", g, 1.0 + offset + rng.normal(0, 1.0, 12))
    frame = pd.DataFrame(data)
    point, _ = product_wrs(frame, np.ones((1, len(DAYS))))
    expected = scipy_wrs(frame, "grp")
    assert point == pytest.approx(expected)
    assert expected[("s1", "P1")] != expected[("s2", "P1")]


def test_wrs_critical_values_use_the_true_dof_of_large_groups():
    """t placed between the critical |t| of the pair's true dof (n_a + n_b - 2 = 38) and that
    of half of it (the 95 % level: 2.024 vs 2.086): rejected at 95 % by SciPy, so the
    table of critical values must reach dof 38."""
    a, b = band_pair(20, 2.05)
    frame = pd.DataFrame(rows("s", "P1", "a", a) + rows("s", "P1", "b", b))
    p = sps.ttest_ind(a, b).pvalue
    assert 0.04 < p < 0.05  # rejected at 95 %, which a critical value of dof 19 would not
    point, _ = product_wrs(frame, np.ones((1, len(DAYS))))
    assert point[("s", "P1")] == pytest.approx(1.0 + 0.8 + 0.6)
    assert point == pytest.approx(scipy_wrs(frame, "grp"))


def test_wrs_resamples_larger_than_the_data_use_their_own_dof():
    """A resample that draws every date 3 times (60 rows a group, dof 118) beside one that
    draws each once: the resampled score is SciPy's on the rows copied 3 times, with t placed
    between the critical values of dof 118 and dof 38 (1.980 and 2.024 at 95 %)."""
    a, b = band_pair(20, 2.0, replicate=3)
    lone = rows("s2", "P1", "c", [1.0, 2.0, 3.0, 4.0, 5.0])  # a smaller group, in no pair
    frame = pd.DataFrame(rows("s", "P1", "a", a) + rows("s", "P1", "b", b) + lone)
    tripled = pd.DataFrame(
        rows("s", "P1", "a", np.repeat(a, 3)) + rows("s", "P1", "b", b.repeat(3))
    )
    p3 = sps.ttest_ind(np.repeat(a, 3), np.repeat(b, 3)).pvalue
    assert 0.045 < p3 < 0.05
    w = np.zeros((2, len(DAYS)))
    w[0, :20] = 3.0
    w[1, :20] = 1.0
    _, boot = product_wrs(frame, w)
    assert boot[0, 0] == pytest.approx(scipy_wrs(tripled, "grp")[("s", "P1")])
    assert boot[0, 0] == pytest.approx(2.4)
    assert boot[1, 0] == pytest.approx(scipy_wrs(frame, "grp")[("s", "P1")])


def test_wrs_point_score_needs_the_table_of_its_own_group_sizes():
    """Groups of 5 and 35 windows on different dates, and resamples that keep only one
    window of one group (undefined: NaN, whichever group it is): the point score (every
    multiplicity 1) still tests the pair at its true dof 38, with t = 2.1 between the
    critical values of dof 38 (2.024) and of any smaller table (dof 10: 2.228)."""
    rng = np.random.default_rng(2)
    big = rng.normal(0.0, 1.0, 35)
    small = np.array([-1.0, -0.4, 0.1, 0.6, 1.2])

    def t_of(delta: float) -> float:
        return sps.ttest_ind(small + delta, big).statistic

    delta = (2.1 - t_of(0.0)) / (t_of(1.0) - t_of(0.0))  # t is linear in the shift
    frame = pd.DataFrame(rows("s", "P1", "a", small + delta) + rows("s", "P1", "b", big, start=5))
    w = np.zeros((2, len(DAYS)))
    w[0, [0, 10, 11, 12]] = 1.0  # a: one window, b: three
    w[1, [0, 1, 2, 10]] = 1.0  # a: three windows, b: one
    point, boot = product_wrs(frame, w)
    expected = scipy_wrs(frame, "grp")[("s", "P1")]
    assert expected == pytest.approx(2.4)  # p < 0.05 at dof 38
    assert point[("s", "P1")] == pytest.approx(expected)
    assert np.isnan(boot).all()


@pytest.mark.filterwarnings(
    "ignore:Precision loss occurred:RuntimeWarning"
)  # SciPy on near-constant data
def test_wrs_constant_groups_and_a_pooled_variance_of_exactly_one():
    """Hand-made pairs, each its own system:
    * A: constant 1.0 vs constant 2.0 -> t = +inf, rejected at every level: 1 + 0.8 + 0.6;
    * B: constant 0.1 (7 windows) vs constant 0.1 (3 windows) -> equal means, t = 0: 0;
    * C: [0, 1, 2] vs [0.5, 1.5, 2.5]: both variances 1, so pooled = 1 exactly;
      t = 0.5 / sqrt(1 * (1/3 + 1/3)) = 0.612, dof 4, p = 0.57: rejected at no level: 0;
    * D: constant 1.0 vs [0.5, 1.0, 1.5, 1.0, 1.0]: an ordinary test (SciPy) -- diff 0: 0;
    * E: two windows a group, [1, 2] vs [3, 5]: pooled (0.5 + 2) / 2 = 1.25, t = 2.5 /
      sqrt(1.25 * (1/2 + 1/2)) = 2.236, dof 2, p = 0.155: rejected at 75 % and 60 %: 1.4."""
    data = rows("A", "P1", "a", [1.0] * 5) + rows("A", "P1", "b", [2.0] * 5)
    data += rows("B", "P1", "a", [0.1] * 7) + rows("B", "P1", "b", [0.1] * 3)
    data += rows("C", "P1", "a", [0.0, 1.0, 2.0]) + rows("C", "P1", "b", [0.5, 1.5, 2.5])
    data += rows("D", "P1", "a", [1.0] * 5) + rows("D", "P1", "b", [0.5, 1.0, 1.5, 1.0, 1.0])
    data += rows("E", "P1", "a", [1.0, 2.0]) + rows("E", "P1", "b", [3.0, 5.0])
    frame = pd.DataFrame(data)
    assert sps.ttest_ind([1.0, 2.0], [3.0, 5.0]).pvalue == pytest.approx(0.1548, abs=1e-4)
    assert sps.ttest_ind([0.0, 1.0, 2.0], [0.5, 1.5, 2.5]).pvalue == pytest.approx(0.5734, abs=1e-4)
    expected = {("A", "P1"): 2.4, ("B", "P1"): 0.0, ("C", "P1"): 0.0, ("D", "P1"): 0.0}
    expected[("E", "P1")] = 1.4
    assert scipy_wrs(frame, "grp") == pytest.approx(expected)
    point, boot = product_wrs(frame, np.ones((2, len(DAYS))))
    assert point == pytest.approx(expected)
    np.testing.assert_allclose(boot, [list(expected.values())] * 2)


def test_wrs_of_scores_far_from_zero_keeps_its_precision():
    """Window errors around 1e6 with a spread of about 1 (SciPy centres before squaring):
    the variances come from values centred on each group's own mean, so the decisions are
    SciPy's; sums of squares around 0 would lose every digit of the variance."""
    rng = np.random.default_rng(9)
    data = []
    for system, shift in (("s1", 0.3), ("s2", 0.8), ("s3", 1.5)):
        data += rows(system, "P1", "a", 1e6 + rng.normal(0, 1, 20))
        data += rows(system, "P1", "b", 1e6 + shift + rng.normal(0, 1, 25))
    frame = pd.DataFrame(data)
    expected = scipy_wrs(frame, "grp")
    assert len(set(expected.values())) >= 2  # the systems are not all decided alike
    point, boot = product_wrs(frame, np.ones((1, len(DAYS))))
    assert point == pytest.approx(expected)


def test_date_positions_finds_each_date_and_rejects_dates_outside():
    """Positions in the sorted dates; a date before, between or after them, or any date when
    there is only one other, is an error (ValueError, not an index error)."""
    days = DAYS[[2, 5, 9]]
    got = date_positions(pd.Series(DATES[[9, 2, 5, 5]]), days)
    np.testing.assert_array_equal(got, [2, 0, 1, 1])
    for outside in (DATES[0], DATES[3], DATES[12]):
        with pytest.raises(ValueError, match="not among the resampled dates"):
            date_positions(pd.Series([outside]), days)
    with pytest.raises(ValueError, match="not among the resampled dates"):
        date_positions(pd.Series([DATES[4]]), DAYS[[1]])
    np.testing.assert_array_equal(date_positions(pd.Series([DATES[1]]), DAYS[[1]]), [0])


def test_wrs_multiplicities_must_be_a_count_matrix_over_the_dates():
    frame = pd.DataFrame(
        rows("s", "P1", "a", [1.0, 2.0, 3.0]) + rows("s", "P1", "b", [2.0, 3.0, 5.0])
    )
    good = np.ones((2, len(DAYS)))
    product_wrs(frame, good)
    for bad in (np.ones((2, len(DAYS) - 1)), np.ones(len(DAYS)), good * 0.5):
        with pytest.raises(ValueError, match="multiplicities must be"):
            product_wrs(frame, bad)
    negative = good.copy()
    negative[1, 3] = -1.0  # one negative count among valid ones
    with pytest.raises(ValueError, match="non-negative integers"):
        product_wrs(frame, negative)
    fraction = good.copy()
    fraction[0, 0] = 1.5  # one non-integer count among valid ones
    with pytest.raises(ValueError, match="non-negative integers"):
        product_wrs(frame, fraction)


def test_wrs_resamples_come_back_one_row_each_in_any_number():
    """40 resamples over 10 dates (more than one chunk of resamples, more resamples than
    dates), and none at all: one row per resample, in order, each SciPy's score of its
    copied rows; a run without any pair of groups has no keys."""
    rng = np.random.default_rng(5)
    a, b = 1.0 + rng.normal(0, 1, 10), 1.6 + rng.normal(0, 1, 10)
    frame = pd.DataFrame(rows("s", "P1", "a", a) + rows("s", "P1", "b", b))
    dates = DAYS[:10]
    w = rng.integers(0, 3, size=(40, 10)).astype(float)
    w[:, 0] = 2.0  # every group keeps at least two windows
    keys, point, boot = wrs_resampled(frame, "grp", LEVELS, None, dates, w, "y")
    assert boot.shape == (40, 1)
    for r in range(40):
        copied = frame.loc[frame.index.repeat(np.tile(w[r].astype(int), 2))]
        assert boot[r, 0] == pytest.approx(scipy_wrs(copied, "grp")[("s", "P1")]), r
    assert np.ptp(boot) > 0
    keys, point, boot = wrs_resampled(frame, "grp", LEVELS, None, dates, w[:0], "y")
    assert boot.shape == (0, 1) and point.shape == (1,)
    lone = frame.loc[frame["grp"] == "a"]  # one group: no pair to test
    keys, point, boot = wrs_resampled(lone, "grp", LEVELS, None, dates, w[:3], "y")
    assert keys.empty and point.shape == (0,) and boot.shape == (3, 0)


# --------------------------------------------------------------------------- APE / PIE resampled


def small_design():
    """8 units on 4 dates (two a date), two strata, labels P0 (control) / P1; one system."""
    grid = np.array(
        [
            [1.0, 2.0],
            [2.0, 4.0],
            [1.5, 3.5],
            [3.0, 3.0],
            [2.0, 5.0],
            [1.0, 1.0],
            [0.5, 2.5],
            [4.0, 6.0],
        ]
    )
    assigned = np.array([[0, 1, 0, 1, 1, 0, 1, 0]])
    strata = [np.array([0, 0, 1, 1, 0, 0, 1, 1])]
    day = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    return grid, assigned, strata, day


def test_effects_resampled_rejects_malformed_input():
    grid, assigned, strata, day = small_design()
    w = np.ones((2, 4))
    effects_resampled([grid], ["P0", "P1"], assigned, strata, day, w)
    with pytest.raises(ValueError, match="day_of_unit must be"):
        effects_resampled([grid], ["P0", "P1"], assigned, strata, day[:-1], w)
    with pytest.raises(ValueError, match="day_of_unit must be"):
        effects_resampled([grid], ["P0", "P1"], assigned, strata, day, np.ones(4))
    bad = grid.copy()
    bad[1, 1] = np.nan  # one observed outcome (unit 1 drew P1) is NaN
    with pytest.raises(ValueError, match="NaN/infinite"):
        effects_resampled([bad], ["P0", "P1"], assigned, strata, day, w)


def test_effects_resampled_in_chunks_of_growing_width(monkeypatch):
    """One distribution per product (CHUNK_COLUMNS = 1), the second far wider than the
    first (40 strata against 2): the same APE_m and PIE % as all in one product."""
    import tsrate.methods.stability as stability

    rng = np.random.default_rng(8)
    n_dates, per_day = 20, 4
    n_units = n_dates * per_day
    day = np.repeat(np.arange(n_dates), per_day)
    grid = rng.gamma(2.0, 1.0, (n_units, 2)) + np.array([0.0, 0.7])
    assigned = np.vstack([rng.integers(0, 2, n_units), rng.integers(0, 2, n_units)])
    strata = [np.arange(n_units) % 2, np.arange(n_units) % 40]
    w = np.vstack([np.ones(n_dates), rng.integers(0, 3, (3, n_dates))])
    whole = effects_resampled([grid], ["P0", "P1"], assigned, strata, day, w)
    monkeypatch.setattr(stability, "CHUNK_COLUMNS", 1)
    chunked = effects_resampled([grid], ["P0", "P1"], assigned, strata, day, w)
    np.testing.assert_array_equal(chunked[1], whole[1])
    np.testing.assert_array_equal(chunked[2], whole[2])
    assert np.isfinite(whole[1]).all()


def test_aggregate_distributions_over_the_last_axis_of_a_4d_array():
    """(systems x resamples x treatments x distributions), as the stability mart passes it:
    the worst case or mean over the LAST axis only, skipping NaN, all-NaN -> NaN."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=(2, 3, 2, 4))
    values[0, 1, 0, 2] = np.nan
    values[1, 2, 1, :] = np.nan
    with np.errstate(invalid="ignore"):  # the all-NaN row: 0 / 0
        expected = {
            "max": np.nanmax(values, axis=-1, initial=-np.inf, where=~np.isnan(values)),
            "max_abs": np.nanmax(np.abs(values), axis=-1, initial=-np.inf, where=~np.isnan(values)),
            "mean": np.nansum(values, axis=-1) / (~np.isnan(values)).sum(axis=-1),
            "mean_abs": np.nansum(np.abs(values), axis=-1) / (~np.isnan(values)).sum(axis=-1),
        }
    for how, want in expected.items():
        want = np.where(np.isnan(values).all(axis=-1), np.nan, want)
        got = aggregate_distributions(values, how)
        assert got.shape == (2, 3, 2)
        np.testing.assert_allclose(got, want, err_msg=how)
    assert np.isnan(aggregate_distributions(values, "mean")[1, 2, 1])
