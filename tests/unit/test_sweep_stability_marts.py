"""Tests written for the mutation sweep of the rating-stability, user-study, rating and
leaderboard code (tests/planted/sweep_stability_marts.json).

Every expectation is computed independently of the product: SciPy's Student t-test on
physically replicated rows, NumPy written out from the definitions, or small examples
worked by hand (derivations in the comments).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from tests.support.stability_inputs import empty_effects, empty_scores, stability_settings
from tsrate.methods.stability import (
    aggregate_distributions,
    date_positions,
    effects_resampled,
    wrs_resampled,
)
from tsrate.methods.user_study import (
    one_sample_t_right,
    one_sample_t_right_from_summary,
    paired_t,
    paired_t_from_summary,
    spearman,
    user_study_tests,
)
from tsrate.robustness.marts.stability import (
    _worst_distributions,
    effect_resamples,
    wrs_stability,
)

LEVELS = pd.DataFrame({"confidence": [0.95, 0.75, 0.60], "weight": [1.0, 0.8, 0.6]})
DATES = pd.bdate_range("2010-01-04", periods=40)
DAYS = DATES.to_numpy().astype("datetime64[D]")


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


def rows(system: str, pert: str, group: str, values, start: int = 0) -> list[dict]:
    """One row per value, one window date each (dates start at DATES[start])."""
    return [
        dict(
            system_id=system,
            perturbation_id=pert,
            grp=group,
            window_end_date=DATES[(start + i) % len(DATES)],
            y=float(v),
        )
        for i, v in enumerate(values)
    ]


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


# --------------------------------------------------------------------------- user study


def test_t_tests_need_two_values_and_finite_non_negative_summaries():
    """n = 2 is the smallest sample (dof 1); n = 1, a NaN or infinite mean or sd and a
    negative sd are errors, whichever of them is wrong."""
    one = one_sample_t_right_from_summary(3.0, 1.0, 2, 2.0)
    # t = (3 - 2) / (1 / sqrt 2) = sqrt 2, p = P(T_1 >= sqrt 2)
    assert (one.t, one.dof) == (pytest.approx(math.sqrt(2)), 1)
    assert one.p == pytest.approx(sps.t.sf(math.sqrt(2), 1))
    pair = paired_t_from_summary(1.0, 1.0, 2)
    assert (pair.t, pair.dof) == (pytest.approx(math.sqrt(2)), 1)
    assert one_sample_t_right([1.0, 3.0], 1.0).t == pytest.approx(1.0)  # mean 2, sd sqrt 2
    assert paired_t([3.0, 5.0], [2.0, 2.0]).t == pytest.approx(2.0)  # d = [1, 3]: 2 / 1
    for call in (
        lambda: one_sample_t_right_from_summary(3.0, 1.0, 1, 2.0),
        lambda: paired_t_from_summary(1.0, 1.0, 1),
        lambda: one_sample_t_right([1.0], 0.0),
        lambda: paired_t([1.0], [0.0]),
    ):
        with pytest.raises(ValueError, match="n >= 2"):
            call()
    bad = [(math.nan, 1.0), (3.0, math.nan), (math.inf, 1.0), (3.0, math.inf), (3.0, -1.0)]
    for mean, sd in bad:
        with pytest.raises(ValueError, match="finite"):
            one_sample_t_right_from_summary(mean, sd, 10, 2.0)
        with pytest.raises(ValueError, match="finite"):
            paired_t_from_summary(mean, sd, 10)


@pytest.mark.filterwarnings(
    "ignore:Precision loss occurred:RuntimeWarning"
)  # SciPy on near-constant data
def test_t_tests_of_constant_samples_follow_the_documented_convention():
    """sd 0: the mean at the hypothesised value -> t = 0 and every p = 1 (H0 kept); above it
    -> t = +inf, p = 0 (right tail; paired: p_greater 0, p_less 1, two-sided 0); below it
    -> t = -inf (one-sample p = 1; paired: p_less 0, p_greater 1, two-sided 0). The raw-value
    forms agree, also for a constant 0.1 whose float mean is not exactly 0.1."""
    at = one_sample_t_right_from_summary(2.0, 0.0, 5, 2.0)
    assert (at.t, at.p) == (0.0, 1.0)
    above = one_sample_t_right_from_summary(2.5, 0.0, 5, 2.0)
    assert (above.t, above.p) == (math.inf, 0.0)
    below = one_sample_t_right_from_summary(1.5, 0.0, 5, 2.0)
    assert (below.t, below.p) == (-math.inf, 1.0)
    zero = paired_t_from_summary(0.0, 0.0, 5)
    assert (zero.t, zero.p_two_sided, zero.p_less, zero.p_greater) == (0.0, 1.0, 1.0, 1.0)
    up = paired_t_from_summary(0.5, 0.0, 5)  # 0 < mean < 1: still "above 0"
    assert (up.t, up.p_two_sided, up.p_less, up.p_greater) == (math.inf, 0.0, 1.0, 0.0)
    down = paired_t_from_summary(-0.5, 0.0, 5)
    assert (down.t, down.p_two_sided, down.p_less, down.p_greater) == (-math.inf, 0.0, 0.0, 1.0)
    const = one_sample_t_right([0.1] * 3, 0.1)
    assert (const.t, const.p, const.mean) == (0.0, 1.0, 0.1)
    same = paired_t([0.3, 0.4, 1.1], [0.2, 0.3, 1.0])  # d = 0.1 in exact arithmetic only
    d = np.array([0.3, 0.4, 1.1]) - np.array([0.2, 0.3, 1.0])
    assert same.t == pytest.approx(sps.ttest_rel([0.3, 0.4, 1.1], [0.2, 0.3, 1.0]).statistic)
    assert same.sd_diff == pytest.approx(np.std(d, ddof=1))
    flat = paired_t([0.1] * 3, [0.0] * 3)
    assert (flat.t, flat.sd_diff, flat.mean_diff, flat.p_two_sided) == (math.inf, 0.0, 0.1, 0.0)


def test_spearman_needs_three_pairs_and_two_varying_inputs():
    got = spearman([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    # ranks (1, 2, 3) vs (1, 3, 2): rho = 1 - 6 * (0 + 1 + 1) / (3 * 8) = 0.5
    assert (got.rho, got.n) == (pytest.approx(0.5), 3)
    with pytest.raises(ValueError, match="at least 3 pairs"):
        spearman([1.0, 2.0], [2.0, 1.0])
    for a, b in (([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]), ([1.0, 2.0, 3.0], [4.0, 4.0, 4.0])):
        with pytest.raises(ValueError, match="constant"):
            spearman(a, b)


def user_study_row(test_id: str, kind: str, **values) -> dict:
    base = dict(
        test_id=test_id,
        source_table="Table 4",
        test_kind=kind,
        question="Q8",
        question_after="Q10",
        hypothesis="h",
        n=10,
        mean=3.0,
        sd=1.0,
        mean_after=3.5,
        sd_after=1.0,
        hypothesised_mean=np.nan,
        alpha=0.05,
        reported_t=np.nan,
        reported_p=np.nan,
        reported_rho=np.nan,
    )
    return base | values


def test_user_study_tests_recompute_only_what_the_seed_allows():
    """Hand-made seed rows:
    * P1: paired, printed t 1.0 (its sign is not used), n 10, means 3.0 -> 3.5: mean_diff
      -0.5, sd_diff = 0.5 * sqrt(10) / 1.0 = 1.581, t = -1.0, p = P(T_9 <= -1) = 0.1717,
      two-sided 0.3434, not rejected at 0.05;
    * P2: paired, printed t 0 (no sd can be backed out of it) and P3 without a printed t
      (None), P4 with NaN: not recomputed (no t, no p, rejected null);
    * S1: a Spearman row: not recomputed;
    * O1: one-sample, mean 3.0, sd 1.0, n 10 against 2: t = sqrt(10) = 3.162, p = 0.0058,
      rejected."""
    summary = pd.DataFrame(
        [
            user_study_row("P1", "paired_t", reported_t=1.0),
            user_study_row("P2", "paired_t", reported_t=0.0),
            user_study_row("P3", "paired_t", reported_t=None),
            user_study_row("P4", "paired_t"),
            user_study_row("S1", "spearman", reported_rho=0.4),
            user_study_row("O1", "one_sample_t_right", hypothesised_mean=2.0),
        ]
    )
    out = user_study_tests(summary).set_index("test_id")
    p1 = out.loc["P1"]
    assert p1["mean_diff"] == pytest.approx(-0.5)
    assert p1["sd_diff"] == pytest.approx(0.5 * math.sqrt(10))
    assert p1["t_statistic"] == pytest.approx(-1.0)
    assert p1["p_value"] == pytest.approx(sps.t.cdf(-1.0, 9))
    assert p1["p_two_sided"] == pytest.approx(2 * sps.t.cdf(-1.0, 9))
    assert (p1["dof"], bool(p1["rejected"]), bool(p1["is_recomputed"])) == (9, False, True)
    for test_id in ("P2", "P3", "P4", "S1"):
        row = out.loc[test_id]
        assert not row["is_recomputed"], test_id
        assert pd.isna(row["t_statistic"]) and pd.isna(row["p_value"]), test_id
        assert pd.isna(row["rejected"]), test_id
    o1 = out.loc["O1"]
    assert o1["t_statistic"] == pytest.approx(math.sqrt(10))
    assert o1["p_value"] == pytest.approx(sps.t.sf(math.sqrt(10), 9))
    assert bool(o1["rejected"]) and bool(o1["is_recomputed"])


def test_user_study_rejects_only_below_alpha():
    """A one-sample row whose p equals alpha exactly is not rejected (p < alpha): the mean
    is chosen so that t is the 95 % quantile of T_9, p = 0.05 up to rounding, and alpha is
    set to that very p."""
    t95 = sps.t.ppf(0.95, 9)
    mean = 2.0 + t95 / math.sqrt(10)  # sd 1, n 10
    p = one_sample_t_right_from_summary(mean, 1.0, 10, 2.0).p
    assert p == pytest.approx(0.05, rel=1e-9)
    rows = [
        user_study_row("A", "one_sample_t_right", mean=mean, hypothesised_mean=2.0, alpha=p),
        user_study_row("B", "one_sample_t_right", mean=mean, hypothesised_mean=2.0, alpha=0.06),
    ]
    out = user_study_tests(pd.DataFrame(rows)).set_index("test_id")
    assert not out.loc["A", "rejected"] and out.loc["B", "rejected"]


# --------------------------------------------------------------------------- stability mart


def test_wrs_stability_rates_each_metric_by_its_own_published_score_and_worst_value():
    """One system under one perturbation (a lone system: rated by its absolute value,
    ceil(L * |score - 0| / max_score), L = 3). The published scores are taken as they are:
    wrs_industry 1.8 of at most 2.4 -> ceil(3 * 0.75) = 3; wrs_company 1.0 of at most 4.8
    -> ceil(3 * 0.208) = 1 (swapping the worst values would give 2 and 2; an ideal of 1
    instead of 0 would give ceil(3 * 0.8 / 1.4) = 2 for wrs_industry)."""
    rng = np.random.default_rng(1)
    data = []
    for ticker, industry in (("A", "Tech"), ("B", "Tech"), ("C", "Bank"), ("D", "Bank")):
        for row in rows("s", "P1", ticker, rng.normal(0, 1, 12)):
            data.append(row | {"ticker": ticker, "industry": industry})
    errors = pd.DataFrame(data)
    scores = pd.DataFrame(
        {
            "metric": ["wrs_industry", "wrs_company"],
            "system_id": "s",
            "perturbation_id": "P1",
            "raw_score": [1.8, 1.0],
            "max_score": [2.4, 4.8],
        }
    )
    frames = wrs_stability(errors, scores, LEVELS, DAYS[:12], np.ones((3, 12)), "y", 3, 0.9)
    out = pd.concat(frames).drop_duplicates("metric").set_index("metric")
    assert out.loc["wrs_industry", "raw_score"] == 1.8
    assert out.loc["wrs_company", "raw_score"] == 1.0
    assert out.loc["wrs_industry", "rating"] == 3
    assert out.loc["wrs_company", "rating"] == 1


def test_worst_distributions_break_ties_by_the_first_distribution_id():
    """d1 and d2 tie on |APE_m| = 2 (signs differ): with top_k = 1 the first id, d1, is
    resampled; by PIE % d3 (9) is the largest. d2 is not resampled."""
    effects = pd.DataFrame(
        {
            "run_id": "r",
            "system_id": "S1",
            "distribution_id": ["d1", "d2", "d3"],
            "confounder": "industry",
            "perturbation_id": "P1",
            "ape_matched": [-2.0, 2.0, 1.0],
            "pie_percent": [5.0, 5.0, 9.0],
        }
    )
    ids = pd.Series(["d1", "d2", "d3"])
    mask = _worst_distributions(effects, "r", ["S1"], ids, ["P1"], 1)
    np.testing.assert_array_equal(mask[0, :, 0], [True, False, True])


def test_a_mean_over_distributions_resamples_every_distribution_whatever_top_k():
    """top_k limits the work only for the max aggregation: a mean needs every distribution,
    so top_k = 1 or 2 gives the same resamples as top_k = 0 (all), and every multiplicity 1
    gives the published mean over distributions (perturbation_effect_scores)."""
    from tests.support.effect_study import SETTINGS, effect_inputs, published_effects
    from tsrate.methods.causal.effects import effect_scores

    errors, sets, distributions, dates = effect_inputs()
    effects, _ = published_effects(errors, sets, distributions)
    settings = SETTINGS | {"distribution_aggregation": "mean"}
    weights = np.vstack([np.ones(dates.size), np.resize([2.0, 0.0, 1.0], dates.size)])
    args = (sets, distributions, "r1", dates, weights, settings)
    every = effect_resamples(errors, effects, 0, *args)
    assert set(every) == {"ape_company", "ape_industry", "pie_company", "pie_industry"}
    # resample 0 draws every date once: the published scores of the mean aggregation
    published = effect_scores(effects, "mean").set_index(["metric", "system_id", "perturbation_id"])
    for metric, (keys, boot) in every.items():
        index = pd.MultiIndex.from_arrays(
            [[metric] * len(keys), keys["system_id"], keys["perturbation_id"]]
        )
        want = published["raw_score"].reindex(index).to_numpy()
        np.testing.assert_allclose(boot[0], want, rtol=1e-10, err_msg=metric)
    for top_k in (1, 2):
        top = effect_resamples(errors, effects, top_k, *args)
        assert set(top) == set(every)
        for metric, (keys, boot) in every.items():
            pd.testing.assert_frame_equal(top[metric][0], keys)
            np.testing.assert_allclose(top[metric][1], boot, rtol=1e-12, err_msg=metric)
            assert np.isfinite(boot).all()


def test_effect_resamples_of_systems_with_different_perturbation_sets():
    """'flat' is run on P0 P1 P2 and 'moved' on P0 P1 only: with every multiplicity 1 the
    resampled APE_m / PIE % of both sets, side by side, are the published scores
    (perturbation_effects -> perturbation_effect_scores, with the worst case over
    distributions)."""
    from tests.support.effect_study import SEED, SETTINGS, effect_inputs
    from tsrate.methods.causal.effects import effect_scores, study_effects

    errors, sets, distributions, dates = effect_inputs()
    sets = sets.assign(perturbation_set=["P0 P1 P2", "P0 P1"])
    effects = study_effects(errors, sets, distributions, SEED, draws=3, estimand="ATE")
    published = effect_scores(effects, "max").set_index(["metric", "system_id", "perturbation_id"])
    ones = np.ones((2, dates.size))
    resamples = effect_resamples(
        errors, effects, 0, sets, distributions, "r1", dates, ones, SETTINGS
    )
    assert set(resamples) == {"ape_company", "ape_industry", "pie_company", "pie_industry"}
    for metric, (keys, boot) in resamples.items():
        assert sorted(zip(keys["system_id"], keys["perturbation_id"], strict=True)) == [
            ("flat", "P1"),
            ("flat", "P2"),
            ("moved", "P1"),
        ]
        index = pd.MultiIndex.from_arrays(
            [[metric] * len(keys), keys["system_id"], keys["perturbation_id"]]
        )
        want = published["raw_score"].reindex(index).to_numpy()
        np.testing.assert_allclose(boot, [want, want], rtol=1e-10, err_msg=metric)


def accuracy_only_inputs(n_dates: int = 10):
    """Two systems, accuracy metrics only (no robustness scores, no effects)."""
    dates = pd.bdate_range("2024-01-01", periods=n_dates)
    rng = np.random.default_rng(0)
    rows = []
    for system, ticker, date in itertools.product(("S1", "S2"), ("AAA", "BBB"), dates):
        rows.append(("r1", system, "P0", ticker, "Tech", date, rng.random(), 1 + rng.random()))
    columns = ["run_id", "system_id", "perturbation_id", "ticker", "industry"]
    columns += ["window_end_date", "smape", "mase"]
    errors = pd.DataFrame(rows, columns=columns).assign(
        sign_accuracy=50.0, max_abs_residual=rng.random(len(rows))
    )
    sets = pd.DataFrame(
        {
            "run_id": "r1",
            "system_id": ["S1", "S2"],
            "perturbation_set": "P0",
            "has_effects": False,
        }
    )
    return errors, empty_scores(), empty_effects(), sets


@pytest.mark.parametrize("asked,used", [(4, 4), (1, 1), (0, 1), (100, 10)])
def test_rating_stability_block_length_is_capped_between_one_and_the_dates(asked, used):
    """The block length is the setting, at least 1 and at most the 10 window dates."""
    from tsrate.methods.causal.distributions import DISTRIBUTION_COLUMNS
    from tsrate.robustness.marts.stability import COLUMNS, rating_stability

    errors, no_scores, no_effects, sets = accuracy_only_inputs()
    settings = stability_settings(bootstrap_block_length=asked)
    no_distributions = pd.DataFrame(columns=DISTRIBUTION_COLUMNS)
    out = rating_stability(errors, no_scores, no_effects, LEVELS, sets, no_distributions, settings)
    assert set(out["metric"]) == {"smape", "mase", "sign_accuracy"}
    assert out["block_length"].eq(used).all()
    assert list(out.columns) == COLUMNS
    assert isinstance(out.index, pd.RangeIndex)
    # only sign accuracy is higher-is-better
    assert (out["higher_is_better"] == (out["metric"] == "sign_accuracy")).all()


def test_rating_stability_takes_each_runs_own_published_wrs():
    """Two runs of the same systems: each run's wrs_industry rows carry that run's published
    score (r1: 0.6 and 1.8, r2: 2.4 and 0.0), not the other run's."""
    from tsrate.methods.causal.distributions import DISTRIBUTION_COLUMNS
    from tsrate.robustness.marts.stability import rating_stability

    errors, _, no_effects, sets = accuracy_only_inputs()
    errors = errors.assign(industry=np.where(errors["ticker"] == "AAA", "Tech", "Bank"))
    errors = pd.concat([errors, errors.assign(run_id="r2")], ignore_index=True)
    sets = pd.concat([sets, sets.assign(run_id="r2")], ignore_index=True)
    published = {("r1", "S1"): 0.6, ("r1", "S2"): 1.8, ("r2", "S1"): 2.4, ("r2", "S2"): 0.0}
    scores = pd.DataFrame(
        [
            dict(run_id=r, metric="wrs_industry", system_id=s, perturbation_id="P0")
            | dict(raw_score=v, max_score=2.4)
            for (r, s), v in published.items()
        ]
    )
    settings = stability_settings(bootstrap_block_length=3)
    no_distributions = pd.DataFrame(columns=DISTRIBUTION_COLUMNS)
    out = rating_stability(errors, scores, no_effects, LEVELS, sets, no_distributions, settings)
    wrs = out.loc[out["metric"] == "wrs_industry"].drop_duplicates(["run_id", "system_id"])
    got = {(r, s): v for r, s, v in wrs[["run_id", "system_id", "raw_score"]].to_numpy()}
    assert got == published


# --------------------------------------------------------------------------- ratings mart


def test_score_table_and_assigned_ratings_carry_outcome_view_and_ideal():
    """score_table stacks robustness rows (their outcome) and accuracy rows (no outcome, in
    the default view); assigned_ratings keeps both and rates a lone WRS against ideal 0 and
    its max_score: 1.8 of 2.4 -> ceil(3 * 1.8 / 2.4) = ceil(2.25) = 3 for both analyses
    (an ideal of 1 would give ceil(3 * 0.8 / 1.4) = 2); a lone SMAPE has no ideal: null."""
    from tsrate.robustness.marts.ratings import assigned_ratings, score_table

    keys = dict(run_id="r1", perturbation_id="P1", system_id="a")
    robustness = pd.DataFrame(
        [
            keys
            | dict(metric=m, higher_is_better=False, outcome="max_abs_residual")
            | dict(is_default_outcome=True, raw_score=1.8, max_score=2.4, score_spread=np.nan)
            for m in ("wrs_industry", "wrs_company")
        ]
    )
    accuracy = pd.DataFrame(
        [keys | dict(metric="smape", higher_is_better=False, mean=0.4)]
        + [keys | dict(metric="mase", higher_is_better=False, mean=np.nan)]  # undefined: left out
    )
    table = score_table(robustness, accuracy)
    assert sorted(table.columns) == sorted(
        ["run_id", "metric", "perturbation_id", "system_id", "higher_is_better", "outcome"]
        + ["is_default_outcome", "raw_score", "max_score", "score_spread", "metric_family"]
    )
    assert list(table["metric"]) == ["wrs_industry", "wrs_company", "smape"]
    smape = table.iloc[2]
    assert (smape["raw_score"], smape["metric_family"]) == (0.4, "accuracy")
    assert smape["outcome"] is None and bool(smape["is_default_outcome"])
    rated = assigned_ratings(table, 3).set_index("metric")
    assert rated.loc["wrs_industry", "rating"] == 3
    assert rated.loc["wrs_company", "rating"] == 3
    assert pd.isna(rated.loc["smape", "rating"])
    assert rated.loc["wrs_industry", "outcome"] == "max_abs_residual"
    assert pd.isna(rated.loc["smape", "outcome"])
    assert bool(rated.loc["smape", "is_default_outcome"])


def test_leave_one_out_adds_no_sign_accuracy_above_its_maximum_of_100():
    """Sign accuracy a = 50, b = 100 on 3 levels: distinct [50, 100] split [50] [100] [] ->
    a 1, b 2. A new system can score below 50 (at 25: [25] [50] [100] -> b 3) or between (at
    75: [50] [75] [100] -> b 3), never above 100: so b's ratings with one added are 3 and 3
    (a place above 100 would leave b at 2). Under P2, a = 0 and b = 100: a new system can
    only score between them (no sign accuracy below 0, and a place AT 0 is no new place: it
    would tie with a), at 50: [0] [50] [100] -> b 3, so again (3, 3), not (2, 3)."""
    from tsrate.robustness.marts.ratings import assigned_ratings, leave_one_out

    scores = pd.DataFrame(
        {
            "run_id": "r1",
            "metric": "sign_accuracy",
            "perturbation_id": ["P1", "P1", "P2", "P2"],
            "system_id": ["a", "b", "a", "b"],
            "higher_is_better": True,
            "metric_family": "accuracy",
            "outcome": None,
            "is_default_outcome": True,
            "raw_score": [50.0, 100.0, 0.0, 100.0],
            "max_score": np.nan,
            "score_spread": np.nan,
        }
    )
    loo = leave_one_out(assigned_ratings(scores, 3), 3).set_index(["perturbation_id", "system_id"])
    for perturbation in ("P1", "P2"):
        b = loo.loc[(perturbation, "b")]
        assert b["rating"] == 2
        assert (b["rating_min_one_added"], b["rating_max_one_added"]) == (3, 3)


def test_leave_one_out_uses_the_groups_largest_worst_value_and_a_place_above_zero():
    """* wrs_industry, a and b tied at 1.2 with max_score 2.4 and 4.8: the group's worst
      value is the larger, 4.8, as in the published ratings: ceil(3 * 1.2 / 4.8) = 1 (2.4
      would give 2); the outcome is carried;
    * mase (no ideal, no upper bound), a lone 0.0: not rated (null); a new system can only
      score above it (at 0 + max(1, 0) = 1): [0] [1] -> a is rated 1, a change."""
    from tsrate.robustness.marts.ratings import assigned_ratings, leave_one_out

    common = dict(run_id="r1", perturbation_id="P1", score_spread=np.nan, is_default_outcome=True)
    wrs = dict(metric="wrs_industry", higher_is_better=False, metric_family="robustness")
    wrs |= dict(outcome="max_abs_residual")
    mase = dict(metric="mase", higher_is_better=False, metric_family="accuracy", outcome=None)
    scores = pd.DataFrame(
        [
            common | wrs | dict(system_id="a", raw_score=1.2, max_score=2.4),
            common | wrs | dict(system_id="b", raw_score=1.2, max_score=4.8),
            common | mase | dict(system_id="a", raw_score=0.0, max_score=np.nan),
        ]
    )
    loo = leave_one_out(assigned_ratings(scores, 3), 3).set_index(["metric", "system_id"])
    for system in ("a", "b"):
        row = loo.loc[("wrs_industry", system)]
        assert row["rating"] == 1 and row["outcome"] == "max_abs_residual"
        assert (row["rating_min_one_removed"], row["rating_max_one_removed"]) == (1, 1)
    lone = loo.loc[("mase", "a")]
    assert pd.isna(lone["rating"]) and pd.isna(lone["outcome"])
    assert (lone["rating_min_one_added"], lone["rating_max_one_added"]) == (1, 1)
    assert bool(lone["changes_if_one_added"])


# --------------------------------------------------------------------------- leaderboard

#: task errors (6 tasks, tickers X X Y Y Z Z) with ties and clipping; relative errors:
#: a [1, .5, .01 (0.005 clipped), 1, 2, 1], b [.5, .5, .01 (0.001 clipped), 2, 1, .5],
#: c [3, 1, 1, .5, 100 (200 clipped), .5], the baseline 1 everywhere.
BOARD = {
    "seasonal_naive": [1.0, 2.0, 1.0, 4.0, 1.0, 2.0],
    "a": [1.0, 1.0, 0.005, 4.0, 2.0, 2.0],
    "b": [0.5, 1.0, 0.001, 8.0, 1.0, 1.0],
    "c": [3.0, 2.0, 1.0, 2.0, 200.0, 1.0],
}
TICKERS = ["X", "X", "Y", "Y", "Z", "Z"]


def board_tasks(errors: dict[str, list[float]], tickers=TICKERS) -> pd.DataFrame:
    return pd.DataFrame(
        [
            dict(run_id="r", scope="all", metric="mase", task_id=f"{t} P1.{i}", block_id=t)
            | dict(system_id=system, test_error=value)
            for system, values in errors.items()
            for i, (t, value) in enumerate(zip(tickers, values, strict=True))
        ]
    )


def fev_scores(relative: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Skill (1 - geometric mean), win rate (lower: 1, tie: 1/2, averaged over the other
    systems) and average rank (ties averaged) of a (tasks x systems) relative-error table,
    written out loop by loop."""
    n_tasks, n_sys = relative.shape
    skill = np.array(
        [1 - math.exp(sum(math.log(v) for v in relative[:, j]) / n_tasks) for j in range(n_sys)]
    )
    win = np.full(n_sys, np.nan)
    if n_sys > 1:
        for j in range(n_sys):
            shares = []
            for k in range(n_sys):
                if k != j:
                    points = [
                        1.0 if x < y else 0.5 if x == y else 0.0 for x, y in relative[:, [j, k]]
                    ]
                    shares.append(sum(points) / n_tasks)
            win[j] = sum(shares) / len(shares)
    ranks = np.array([sps.rankdata(row, method="average") for row in relative]).mean(axis=0)
    return skill, win, ranks


def test_leaderboard_of_four_systems_with_ties_against_a_direct_computation():
    """Every score of the mart from the definitions: skill, win rate (ties 1/2, the mean
    over three other systems -- not their median), average rank (mean over tasks of the
    average-tie ranks -- not the median), and the 95 % block-bootstrap intervals (tickers
    drawn with replacement by NumPy's generator with the mart's seed, all of a drawn ticker's
    tasks taken, the 2.5 % and 97.5 % quantiles over resamples)."""
    from tsrate.robustness.marts.leaderboard import leaderboard

    systems = sorted(BOARD)
    raw = np.array([BOARD[s] for s in systems]).T
    relative = np.clip(raw / raw[:, [systems.index("seasonal_naive")]], 0.01, 100.0)
    skill, win, ranks = fev_scores(relative)
    rng = np.random.default_rng(9)
    blocks = np.array(TICKERS)
    unique = np.unique(blocks)
    boot_skill, boot_win = [], []
    for drawn in rng.integers(0, len(unique), size=(40, len(unique))):
        rows_ = np.concatenate([np.flatnonzero(blocks == unique[i]) for i in drawn])
        s, w, _ = fev_scores(relative[rows_])
        boot_skill.append(s)
        boot_win.append(w)
    board = leaderboard(board_tasks(BOARD), n_resamples=40, seed=9).set_index("system_id")
    board = board.loc[systems]
    np.testing.assert_allclose(board["skill_score"], skill, rtol=1e-12)
    np.testing.assert_allclose(board["win_rate"], win, rtol=1e-12)
    np.testing.assert_allclose(board["average_rank"], ranks, rtol=1e-12)
    low, high = np.quantile(boot_skill, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(board["skill_score_lower"], low, rtol=1e-10)
    np.testing.assert_allclose(board["skill_score_upper"], high, rtol=1e-10)
    low, high = np.quantile(boot_win, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(board["win_rate_lower"], low, rtol=1e-10)
    np.testing.assert_allclose(board["win_rate_upper"], high, rtol=1e-10)
    assert (board["n_tasks"] == 6).all() and board["reason"].isna().all()
    # the example tells the rules apart: the median of the per-task ranks is not their mean,
    # and some relative errors are clipped at either end
    per_task = np.array([sps.rankdata(row, method="average") for row in relative])
    assert not np.allclose(np.median(per_task, axis=0), ranks)
    assert (relative == 0.01).sum() == 2 and (relative == 100.0).sum() == 1


def test_leaderboard_of_two_systems_and_of_the_baseline_alone():
    """Two systems: win rates and their intervals are defined, no reason. The baseline
    alone: skill 0 (every relative error 1), no win rate, the reason says why; with two
    tickers or more its skill interval is [0, 0]; with one ticker there is no interval at
    all (a resample could only repeat the data)."""
    from tsrate.robustness.marts.leaderboard import leaderboard

    pair = {k: BOARD[k] for k in ("seasonal_naive", "a")}
    board = leaderboard(board_tasks(pair), n_resamples=20, seed=1).set_index("system_id")
    # a vs baseline: relative a [1, .5, .01, 1, 2, 1]: wins on tasks 1, 2, ties 0, 3, 5,
    # loses 4 -> (2 + 1.5) / 6 = 7/12; the baseline 5/12
    assert board.loc["a", "win_rate"] == pytest.approx(7 / 12)
    assert board.loc["seasonal_naive", "win_rate"] == pytest.approx(5 / 12)
    assert board[["win_rate_lower", "win_rate_upper", "skill_score_lower"]].notna().all().all()
    assert board["reason"].isna().all()
    alone = {"seasonal_naive": BOARD["seasonal_naive"]}
    row = leaderboard(board_tasks(alone), n_resamples=20, seed=1).iloc[0]
    assert row["skill_score"] == 0.0 and pd.isna(row["win_rate"])
    assert (row["skill_score_lower"], row["skill_score_upper"]) == (0.0, 0.0)
    assert pd.isna(row["win_rate_lower"]) and pd.isna(row["win_rate_upper"])
    assert row["reason"] == "a lone system has no win rate"
    two_tickers = leaderboard(board_tasks(pair, ["X"] * 3 + ["Y"] * 3), n_resamples=20, seed=1)
    assert two_tickers[["skill_score_lower", "win_rate_upper"]].notna().all().all()
    one_ticker = leaderboard(board_tasks(pair, ["X"] * 6), n_resamples=20, seed=1)
    assert one_ticker[["skill_score_lower", "win_rate_upper"]].isna().all().all()
    assert one_ticker["skill_score"].notna().all()
    row = leaderboard(board_tasks(alone), n_resamples=0).iloc[0]
    assert row["skill_score"] == 0.0 and pd.isna(row["win_rate"])


def test_scoped_tasks_list_every_task_under_all_and_under_its_perturbation():
    from tsrate.robustness.marts.leaderboard import scoped_tasks

    tasks = pd.DataFrame(
        {
            "run_id": "r",
            "metric": "mase",
            "ticker": ["AAA", "BBB"],
            "perturbation_id": ["P1", "P2"],
            "system_id": "a",
            "test_error": [1.0, 2.0],
        }
    )
    out = scoped_tasks(tasks)
    got = out[["scope", "task_id", "block_id", "test_error"]].to_records(index=False).tolist()
    assert sorted(got) == sorted(
        [
            ("all", "AAA P1", "AAA", 1.0),
            ("all", "BBB P2", "BBB", 2.0),
            ("P1", "AAA P1", "AAA", 1.0),
            ("P2", "BBB P2", "BBB", 2.0),
        ]
    )
