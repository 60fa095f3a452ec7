"""The statistical analyst's rules on one series' shape (``understanding/analyst.py``):
trend, seasonality, anomalies and structural breaks, against the statistics its docstring
names, written out independently (tests/support/sweep6_understanding.py). Written for round
6 of the mutation sweep (tests/planted/sweep6_understanding.json).

Two kinds of check: (1) the rule's arithmetic on many random series against the reference
(so a changed coefficient, window or lag changes a checked number), and (2) each threshold
at its exact boundary, with the statistic it reads stubbed to the boundary value (so a
``>=`` turned ``>`` or a threshold moved is seen even where no float series lands exactly
on it). The product's own helpers are never used to compute an expectation.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.support.sweep6_understanding import (
    SQRT2,
    base_series,
    ref_changepoint,
    ref_detrended,
    ref_noise,
    ref_ols,
    ref_peaks,
    ref_robust_z,
    skew,
)
from tsrate.suites.understanding import analyst as an

# --------------------------------------------------------------------------------------
# Trend
# --------------------------------------------------------------------------------------


def test_trend_fit_is_least_squares_with_its_t_test():
    rng = np.random.default_rng(0)
    for n in (5, 12, 40, 150):
        for slope in (-1.0, 0.0, 0.05, 2.0):
            x = 3 + slope * np.arange(n) + rng.normal(0, 1, n)
            fit = an.trend_fit(x)
            s, r2, p = ref_ols(x)
            assert fit["slope"] == pytest.approx(s, abs=1e-9)
            assert fit["r2"] == pytest.approx(r2, abs=1e-9)
            assert fit["p"] == pytest.approx(p, rel=1e-6, abs=1e-300)


def test_has_trend_against_r2_and_p_on_many_short_series():
    """Short noisy lines put R^2 and p on both sides of 0.5 and 0.001 (and of 1.0, 0.002)."""
    rng = np.random.default_rng(1)
    near = 0
    for _ in range(600):
        n = int(rng.integers(6, 25))
        x = rng.uniform(0.05, 0.6) * np.arange(n) + rng.normal(0, 1, n)
        _, r2, p = ref_ols(x)
        assert an.has_trend(x) == (r2 >= 0.5 and p < 1e-3)
        near += r2 >= 0.5 and 1e-3 <= p < 2e-3
    assert near >= 3


def test_has_trend_thresholds_exactly(monkeypatch):
    def with_fit(r2, p):
        monkeypatch.setattr(an, "trend_fit", lambda x: {"slope": 1.0, "r2": r2, "p": p})
        return an.has_trend(np.zeros(3))

    below = np.nextafter(1e-3, 0)
    assert with_fit(0.5, below)
    assert not with_fit(np.nextafter(0.5, 0), below)
    assert not with_fit(0.9, 1e-3)
    assert with_fit(1.0, below) and not with_fit(1.0, 1.5e-3)


def test_detrended_removes_the_least_squares_line():
    t = np.arange(12.0)
    wiggle = np.tile([1.0, -1.0, -1.0, 1.0], 3)  # orthogonal to 1 and t
    np.testing.assert_allclose(an._detrended(7 - 0.5 * t + wiggle), wiggle, atol=1e-12)
    x = np.random.default_rng(2).normal(0, 1, 31)
    np.testing.assert_allclose(an._detrended(x), ref_detrended(x), atol=1e-12)


# --------------------------------------------------------------------------------------
# Seasonality
# --------------------------------------------------------------------------------------


def assert_same_peaks(got, want):
    assert len(got) == len(want)
    for (p1, s1), (p2, s2) in zip(got, want, strict=True):
        assert p1 == pytest.approx(p2, rel=1e-9) and s1 == pytest.approx(s2, abs=1e-9)


def test_periodogram_peaks_against_the_fft():
    rng = np.random.default_rng(3)
    for n in (5, 6, 17, 60, 61, 100):
        t = np.arange(n)
        for _ in range(4):
            x = (
                rng.uniform(0, 3) * np.sin(2 * np.pi * t / rng.uniform(2.5, n / 2))
                + 0.3 * t
                + rng.normal(0, 1, n)
            )
            assert_same_peaks(an.periodogram_peaks(x), ref_peaks(x))


def test_periodogram_keeps_periods_of_exactly_2_5_days_and_half_the_length():
    """n = 60: bin 24 is period 2.5 (frequency 0.4) and bin 2 is period 30 (= n/2); both
    are kept. Bins 1 (period 60) and 25 (period 2.4) are not."""
    t = np.arange(60)
    for k, kept in ((24, True), (2, True), (25, False), (1, False)):
        x = np.cos(2 * np.pi * k * t / 60) + 0.3 * np.cos(2 * np.pi * 7 * t / 60)
        periods = [round(p, 6) for p, _ in an.periodogram_peaks(x)]
        assert (round(60 / k, 6) in periods) is kept
        assert_same_peaks(an.periodogram_peaks(x), ref_peaks(x))
    # too short to hold any period in range, and a straight line (no power): no peaks
    assert an.periodogram_peaks(np.array([1.0, 3.0, 2.0, 5.0])) == []
    assert an.periodogram_peaks(np.zeros(30)) == []


def test_periodogram_shares_do_not_depend_on_the_scale():
    """Shares of power are ratios: a series scaled by 1e-3 (total power well under 1) has
    the same peaks; and on 5 days the last bin (period 2.5) is a peak when it beats its one
    neighbour, whatever its size."""
    t = np.arange(40)
    x = np.sin(2 * np.pi * t / 8) + 0.5 * np.sin(2 * np.pi * t / 3) + 0.1 * np.cos(t)
    for scale in (1e-3, 1.0, 1e3):
        assert_same_peaks(an.periodogram_peaks(scale * x), ref_peaks(x))
    five = np.array([0.0, 0.3, -0.2, 0.1, -0.25])
    for scale in (1e-2, 1.0, 10.0):
        got = an.periodogram_peaks(scale * five)
        assert_same_peaks(got, ref_peaks(five))
        assert [round(p, 9) for p, _ in got] == [2.5]


def test_seasonal_strength_is_the_largest_peaks_share(monkeypatch):
    monkeypatch.setattr(an, "periodogram_peaks", lambda x: [(12.0, 0.15), (5.0, 0.1)])
    assert an.seasonal_strength(np.zeros(3)) == 0.15
    monkeypatch.setattr(an, "periodogram_peaks", lambda x: [])
    assert an.seasonal_strength(np.zeros(3)) == 0.0
    for share, seasonal in ((0.2, True), (np.nextafter(0.2, 0), False), (0.39, True)):
        monkeypatch.setattr(an, "periodogram_peaks", lambda x, s=share: [(3.0, s)])
        assert bool(an.has_seasonality(np.zeros(3))) is seasonal


def stub_peaks(monkeypatch, table):
    """periodogram_peaks answering by the (length, first value) of the array it is given."""
    monkeypatch.setattr(an, "periodogram_peaks", lambda x: table.get((len(x), float(x[0])), []))


def blocks(first_amp, second_amp, n):
    """[a, -a, -a, a] blocks then [b, -b, -b, b] blocks: no trend to remove, halves of
    standard deviation a and b."""
    half = n // 2
    return np.concatenate(
        [np.resize([1.0, -1.0, -1.0, 1.0], half) * first_amp]
        + [np.resize([1.0, -1.0, -1.0, 1.0], n - half) * second_amp]
    )


def test_seasonality_kind_multiple_at_its_thresholds(monkeypatch):
    x = blocks(1.0, 1.0, 64)
    whole = (64, 1.0)
    for peaks, kind in (
        ([(20.0, 0.5), (7.9, 0.125)], "multiple"),  # s2 = s1 / 4 exactly, ratio 2.53
        ([(20.0, 0.5), (7.9, 0.124)], "fixed"),
        ([(7.9, 0.5), (20.0, 0.2)], "multiple"),  # the longer period second
        ([(20.0, 0.5), (8.0, 0.4)], "fixed"),  # ratio 2.5 exactly is not > 2.5
        ([(20.0, 0.5)], "fixed"),
    ):
        stub_peaks(monkeypatch, {whole: peaks})
        assert an.seasonality_kind(x) == kind


def test_seasonality_kind_shifting_at_its_thresholds(monkeypatch):
    for n in (60, 59, 64):
        x = blocks(1.0, 1.0, n)
        x[0], x[n // 2] = 2.0, 3.0  # tag the halves for the stub
        first, second = (n // 2, 2.0), (n - n // 2, 3.0)
        for p1, p2, shifting in (
            (10.0, 12.1, True),
            (10.0, 12.0, False),  # ratio 1.2 exactly
            (10.0, 8.2, True),
            (12.0, 10.0, False),  # ratio 1/1.2 exactly
            (10.0, 8.4, False),
        ):
            stub_peaks(monkeypatch, {first: [(p1, 0.5), (3.0, 0.1)], second: [(p2, 0.5)]})
            kind = an.seasonality_kind(x)
            assert kind != "multiple"
            assert (kind == "shifting") is (shifting and n >= 60), (n, p1, p2)
        stub_peaks(monkeypatch, {first: [(10.0, 0.5)]})  # no peak in the second half
        assert an.seasonality_kind(x) != "shifting"


def test_seasonality_kind_varying_amplitude(monkeypatch):
    stub_peaks(monkeypatch, {})
    for ratio, kind in ((1.7, "varying_amplitude"), (1.5, "fixed")):
        for n in (64, 72):
            assert an.seasonality_kind(blocks(1.0, ratio, n)) == kind
            assert an.seasonality_kind(blocks(ratio, 1.0, n)) == kind
    # the halves are n // 2 and the rest: 20 days of amplitude 1, then 20 of 1.7
    assert an.seasonality_kind(blocks(1.0, 1.7, 40)) == "varying_amplitude"


def test_seasonality_kind_amplitude_ratio_at_its_thresholds(monkeypatch):
    """The amplitude rule alone (no peaks; the detrending stubbed to the identity so the
    halves' standard deviations are exactly the block amplitudes): a ratio of exactly 1.6
    or 1/1.6 is fixed; 2 -> 3 (ratio 1.5) is fixed and 2 -> 3.4 (1.7) varying, whatever the
    product of the two; a flat first half counts as 1e-9."""
    stub_peaks(monkeypatch, {})
    monkeypatch.setattr(an, "_detrended", lambda x: np.asarray(x, float))
    for first, second, kind in (
        (1.0, 1.6, "fixed"),
        (1.6, 1.0, "fixed"),
        (2.0, 3.0, "fixed"),
        (3.0, 2.0, "fixed"),
        (2.0, 3.4, "varying_amplitude"),
        (3.4, 2.0, "varying_amplitude"),
        (0.0, 2.5e-9, "varying_amplitude"),
        (0.0, 1.5e-9, "fixed"),
    ):
        assert an.seasonality_kind(blocks(first, second, 64)) == kind, (first, second)


# --------------------------------------------------------------------------------------
# Anomalies
# --------------------------------------------------------------------------------------


def test_robust_z_against_a_looped_rolling_median():
    rng = np.random.default_rng(4)
    for n in (5, 21, 22, 60):
        x = rng.normal(0, 1, n)
        x[n // 2] += 8
        np.testing.assert_allclose(an._robust_z(x), ref_robust_z(x), atol=1e-9)
    # no change at all between most days: the noise floor 1e-9 sets the scale
    x = np.zeros(30)
    x[10] = 1.0
    assert an._robust_z(x)[10] == pytest.approx(1e9)


def test_frozen_run_counts_the_repeated_values():
    for x, run in (
        ([1, 2, 3], 0),
        ([1, 1], 2),
        ([1, 2, 2, 2, 3], 3),
        ([5, 5, 5, 5, 5, 1, 1], 5),
        ([0, 1, 1, 0, 0, 0, 0, 2], 4),
    ):
        assert an._frozen_run(np.array(x, float)) == run


def test_clusters_join_consecutive_days_only():
    assert an._clusters(np.array([1, 2, 4, 7, 8, 9])) == [[1, 2], [4], [7, 8, 9]]
    assert an._clusters(np.array([3, 5])) == [[3], [5]]
    assert an._clusters(np.array([], int)) == []


def test_anomaly_kinds_on_hand_built_series():
    noise = 0.2 / (0.6745 * SQRT2)
    x = base_series()
    assert an.anomaly_kind(x) == "none"
    for count, kind in (
        (1, "single_spike"),
        (2, "double_spike"),
        (3, "triple_spike"),
        (4, "triple_spike"),
    ):
        y = x.copy()
        y[[20, 40, 60, 80][:count]] += 10
        assert an.anomaly_kind(y) == kind
    y = x.copy()
    y[50:54] += 10  # four days in a row: a step spike
    assert an.anomaly_kind(y) == "step_spike"
    y[20] += 10  # ... and a lone spike elsewhere: still a step spike (any run of 4+)
    assert an.anomaly_kind(y) == "step_spike"
    y = x.copy()
    y[50:53] += 10  # three days in a row (Appendix B: consecutive anomalies): a triple spike
    assert an.anomaly_kind(y) == "triple_spike"
    y = x.copy()
    y[50:52] += 10  # two days in a row: a double spike
    assert an.anomaly_kind(y) == "double_spike"
    # |z| just over 6 is a spike, just under is not (the rolling median is the base here)
    for size, kind in ((6.3, "single_spike"), (5.7, "none")):
        y = x.copy()
        y[51] += size * noise * np.sign(y[51]) + 0 * y[51]
        assert an.anomaly_kind(y) == kind, size
    # frozen for 5 values (4 zero changes) is a disruption, 4 values are not
    y = x.copy()
    y[30:35] = 0.05
    assert an.anomaly_kind(y) == "temporal_disruption"
    y = x.copy()
    y[30:34] = 0.05
    assert an.anomaly_kind(y) != "temporal_disruption"


def ref_level_shift(x):
    """|median of the last edge days - median of the first| > 5 noise sds, edge = n // 10
    (at least 3), and no trend -- or a trend that one step (two means, split anywhere)
    fits with under half the squared residuals of the least-squares line (a jump)."""
    edge = max(3, len(x) // 10)
    shift = np.median(x[len(x) - edge :]) - np.median(x[:edge])
    _, r2, p = ref_ols(x)
    t = np.arange(len(x))
    line = np.sum((x - np.polyval(np.polyfit(t, x, 1), t)) ** 2)
    step = min(
        np.sum((x[:k] - x[:k].mean()) ** 2) + np.sum((x[k:] - x[k:].mean()) ** 2)
        for k in range(1, len(x))
    )
    jump = (not (r2 >= 0.5 and p < 1e-3)) or step < 0.5 * line
    return bool(abs(shift) > 5 * max(ref_noise(x), 1e-9) and jump)


def test_level_shift_is_five_noise_sds_between_the_edges():
    """Late shifts of 1..12 days by 3..11 noise sds (4.8: between 5 and 5 x 0.91) on series of 20..100 days: a level shift
    exactly when the edge medians say so (edges of n // 10 days, at least 3)."""
    noise = 0.2 / (0.6745 * SQRT2)
    seen = set()
    for n in (20, 29, 30, 40, 55, 100):
        for days in range(1, 13):
            for size in (3.0, 4.5, 4.8, 5.5, 6.5, 8.0, 11.0):
                y = base_series(n)
                y[n - days :] += size * noise
                want = ref_level_shift(y)
                assert (an.anomaly_kind(y) == "level_shift") is want, (n, days, size)
                seen.add(want)
    assert seen == {True, False}
    # a steady trend moves the edges but is no level shift
    y = base_series(100) + 0.05 * np.arange(100)
    assert not ref_level_shift(y) and an.anomaly_kind(y) != "level_shift"


# --------------------------------------------------------------------------------------
# Structural breaks
# --------------------------------------------------------------------------------------


def test_changepoint_against_the_looped_likelihood_ratio():
    rng = np.random.default_rng(5)
    for n in (10, 12, 20, 33, 100):
        for _ in range(5):
            x = rng.normal(0, 1, n)
            k, lr = an.changepoint(x)
            rk, rlr = ref_changepoint(x)
            assert k == rk and lr == pytest.approx(rlr, abs=1e-9)


def test_changepoint_scans_from_15_to_85_percent_and_at_least_5_from_each_end():
    rng = np.random.default_rng(6)
    for n, cut in ((20, 2), (20, 18), (100, 8), (100, 93), (40, 3), (40, 37)):
        x = rng.normal(0, 1, n)
        x[:cut] *= 20 if cut < n / 2 else 1
        x[cut:] *= 20 if cut > n / 2 else 1
        k, lr = an.changepoint(x)
        rk, rlr = ref_changepoint(x)
        assert (k, lr) == (rk, pytest.approx(rlr, abs=1e-9))
        lo, hi = max(5, (15 * n) // 100), min(n - 5, (85 * n) // 100)
        assert k == (lo if cut < n / 2 else hi)
    # a constant stretch: its variance is floored at 1e-12 (the reference floors the same)
    for x in (
        np.concatenate([np.full(8, 1.0), rng.normal(0, 1, 22)]),
        np.concatenate([rng.normal(0, 1, 22), np.full(8, 1.0)]),
    ):
        k, lr = an.changepoint(x)
        rk, rlr = ref_changepoint(x)
        assert k == rk and lr == pytest.approx(rlr, rel=1e-12) and lr > 100
    # a constant series: every split's LR is 0 (floored variances), none is > 0
    assert an.changepoint(np.full(30, 2.0)) == (0, 0.0)


def test_has_break_is_lr_over_25(monkeypatch):
    for lr, broken in ((25.0, False), (np.nextafter(25.0, 30), True), (40.0, True), (20.0, False)):
        monkeypatch.setattr(an, "changepoint", lambda x, v=lr: (10, v))
        assert bool(an.has_break(np.zeros(3))) is broken


def test_break_kind_rules(monkeypatch):
    """Regime shift when the halves differ in stationarity, in trend, or in skewness by
    more than 1; otherwise a parameter shift. The tests and the split are stubbed; the
    skewness is moments (computed here)."""
    n, k = 40, 15
    monkeypatch.setattr(an, "changepoint", lambda x: (k, 30.0))
    sym = np.resize([-1.0, 1.0, 0.0], 40)
    flags = {}
    monkeypatch.setattr(an, "is_stationary", lambda v: flags.get(("s", len(v)), True))
    monkeypatch.setattr(an, "has_trend", lambda v: flags.get(("t", len(v)), False))
    assert an.break_kind(sym) == "parameter_shift"
    for key in (("s", k), ("s", n - k), ("t", k), ("t", n - k)):
        flags.clear()
        flags[key] = key[0] == "t"  # the opposite of the default for one half only
        assert an.break_kind(sym) == "regime_shift", key
    flags.clear()
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(300):
        x = np.concatenate([rng.normal(0, 1, k), rng.exponential(1, n - k) ** rng.uniform(0.5, 2)])
        regime = abs(skew(x[:k]) - skew(x[k:])) > 1.0
        assert an.break_kind(x) == ("regime_shift" if regime else "parameter_shift")
        seen.add((regime, 1.0 < abs(skew(x[:k]) - skew(x[k:])) < 2.0))
    assert {(True, True), (False, False)} <= seen
    monkeypatch.setattr(an, "changepoint", lambda x: (k, 25.0))
    assert an.break_kind(sym) == "none"


def test_adf_and_kpss_p_are_statsmodels_on_long_enough_varying_series():
    from statsmodels.tsa.stattools import adfuller, kpss

    rng = np.random.default_rng(8)
    x = rng.normal(0, 1, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert an._adf_p(x) == pytest.approx(adfuller(x, autolag="AIC")[1])
        assert an._kpss_p(x) == pytest.approx(kpss(x, regression="c", nlags="auto")[1])
    for f in (an._adf_p, an._kpss_p):
        assert f(x[:11]) == 1.0 and f(np.full(20, 3.0)) == 1.0


def test_is_stationary_thresholds(monkeypatch):
    for adf, kp, stationary in (
        (np.nextafter(0.05, 0), np.nextafter(0.05, 1), True),
        (0.05, 0.5, False),
        (0.01, 0.05, False),
        (0.09, 0.5, False),
        (0.01, 0.09, True),
    ):
        monkeypatch.setattr(an, "_adf_p", lambda x, v=adf: v)
        monkeypatch.setattr(an, "_kpss_p", lambda x, v=kp: v)
        assert bool(an.is_stationary(np.zeros(3))) is stationary


def test_anomaly_thresholds_exactly(monkeypatch):
    """A level shift needs |shift| > 5 noise sds, the noise floored at 1e-9: steps of d
    every third day (most changes 0, so the noise is the floor) with the last three days
    at d: d = 5e-9 is exactly 5 floors (no shift), 7e-9 is a shift. A spike needs |z| > 6:
    z stubbed to exactly 6 is none."""
    for d, kind in ((5e-9, "none"), (7e-9, "level_shift"), (4e-9, "none")):
        x = np.tile([0.0, 0.0, 0.0, d, d, d], 5)
        assert an._frozen_run(x) == 3 and not an.has_trend(x)
        assert an.anomaly_kind(x) == kind, d
    x = base_series(40)
    for z, kind in ((6.0, "none"), (np.nextafter(6.0, 7), "single_spike"), (-6.0, "none")):
        monkeypatch.setattr(
            an, "_robust_z", lambda v, s=z: np.where(np.arange(len(v)) == 20, s, 0.0)
        )
        assert an.anomaly_kind(x) == kind, z
