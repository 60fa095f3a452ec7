"""The statistical analyst's rules (``understanding/analyst.py``) against the statistics its
docstring names, written out here independently: least squares and its t-test by formula,
the one-sided periodogram from ``numpy.fft``, a rolling median by loop, the Gaussian
likelihood-ratio scan by loop, Pearson's r from moments, skewness and kurtosis from
moments. Written for round 6 of the mutation sweep (tests/planted/sweep6_understanding.json).

Two kinds of check: (1) the rule's arithmetic on many random series against the reference
(so a changed coefficient, window or lag changes a checked number), and (2) each threshold
at its exact boundary, with the statistic it reads stubbed to the boundary value (so a
``>=`` turned ``>`` or a threshold moved is seen even where no float series lands exactly
on it). The product's own helpers are never used to compute an expectation.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from tsrate.suites.understanding import analyst as an

SQRT2 = math.sqrt(2.0)


# --------------------------------------------------------------------------------------
# References written from the docstrings
# --------------------------------------------------------------------------------------


def ref_ols(x):
    """Slope, R^2 and the two-sided p of the slope's t-test, by formula."""
    x = np.asarray(x, float)
    n = x.size
    t = np.arange(n, dtype=float)
    tc, xc = t - t.mean(), x - x.mean()
    slope = (tc @ xc) / (tc @ tc)
    r2 = (tc @ xc) ** 2 / ((tc @ tc) * (xc @ xc))
    tstat = math.sqrt(r2 * (n - 2) / max(1 - r2, 1e-300))
    return slope, r2, 2 * stats.t.sf(tstat, n - 2)


def ref_detrended(x):
    t = np.arange(len(x), dtype=float)
    design = np.column_stack([t, np.ones_like(t)])
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    return x - design @ coef


def ref_peaks(x):
    """One-sided periodogram of the detrended series (FFT; the Nyquist bin not doubled),
    strict local maxima (the ends compared with 0), periods 2.5 .. n/2, share of the power
    of the positive frequencies, largest share first."""
    x = np.asarray(x, float)
    n = x.size
    y = ref_detrended(x)
    f = np.arange(n // 2 + 1) / n
    power = np.abs(np.fft.rfft(y)) ** 2 / n
    power[1 : (n + 1) // 2] *= 2  # every bin but DC and (even n) Nyquist is doubled
    total = power[1:].sum()
    if total <= 0:
        return []
    padded = np.concatenate([[0.0], power, [0.0]])
    out = []
    for k in range(1, f.size):
        if not (f[k] <= 0.4 + 1e-15 and f[k] * n >= 2 - 1e-12):
            continue
        if padded[k + 1] > padded[k] and padded[k + 1] > padded[k + 2]:
            out.append((1 / f[k], power[k] / total))
    return sorted(out, key=lambda r: -r[1])


def ref_rolling_median(x, window=21):
    h = window // 2
    return np.array([np.median(x[max(0, i - h) : i + h + 1]) for i in range(len(x))])


def ref_noise(x):
    """Noise sd from changes: the median |change| of N(0, s^2) noise is 0.6745 s sqrt(2)."""
    return np.median(np.abs(np.diff(x))) / (0.6745 * SQRT2)


def ref_robust_z(x):
    return (x - ref_rolling_median(x)) / max(ref_noise(x), 1e-9)


def ref_changepoint(x):
    n = len(x)

    def nlv(v):
        return len(v) * math.log(max(np.mean((v - v.mean()) ** 2), 1e-12))

    best_k, best = 0, 0.0
    for k in range(max(5, (15 * n) // 100), min(n - 5, (85 * n) // 100) + 1):
        lr = nlv(x) - nlv(x[:k]) - nlv(x[k:])
        if lr > best:
            best_k, best = k, lr
    return best_k, best


def pearson(u, v):
    u, v = u - u.mean(), v - v.mean()
    return float(u @ v / math.sqrt((u @ u) * (v @ v)))


def ref_cross_lag(a, b, max_lag=8):
    best = (0, 0.0)
    for lag in range(-max_lag, max_lag + 1):
        u, v = (a[: len(a) - lag], b[lag:]) if lag >= 0 else (a[-lag:], b[: len(b) + lag])
        if len(u) < 10:
            continue
        r = pearson(u, v)
        if abs(r) > abs(best[1]) + 1e-12:
            best = (lag, r)
    return best


def skew(v):
    c = v - v.mean()
    return float(np.mean(c**3) / np.mean(c**2) ** 1.5)


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


def base_series(n=100):
    """Changes of exactly +-0.2 (noise sd 0.2 / (0.6745 sqrt 2)), no trend, no spike."""
    return 0.1 * np.resize([1.0, -1.0], n)


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


# --------------------------------------------------------------------------------------
# Volatility, tails, statistical properties
# --------------------------------------------------------------------------------------


def test_arch_p_is_het_arch_of_the_demeaned_changes():
    from statsmodels.stats.diagnostic import het_arch

    rng = np.random.default_rng(9)
    for n in (21, 22, 80):
        x = np.cumsum(rng.normal(0, 1, n) * np.linspace(0.5, 2, n)) + 0.3 * np.arange(n)
        d = np.diff(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # statsmodels' FutureWarning on its return type
            want = het_arch(d - d.mean(), nlags=5)[1]
        assert an.arch_p(x) == pytest.approx(want, rel=1e-9)
    assert an.arch_p(np.cumsum(rng.normal(0, 1, 20))) == 1.0  # 19 changes: too few
    assert an.arch_p(np.arange(50.0)) == 1.0  # constant changes


def ref_volatility(x):
    d = np.diff(x)
    if len(d) > 2 and np.std(np.diff(d)) < 0.02:
        return "none"
    h = len(d) // 2
    ratio = np.var(d[h:]) / max(np.var(d[:h]), 1e-12)
    rho = stats.spearmanr(np.arange(len(d)), np.abs(d))[0]
    if ratio > 2.5 and rho > 0.25:
        return "increasing"
    fall = np.abs(d[1:][d[:-1] < 0])
    rise = np.abs(d[1:][d[:-1] >= 0])
    if len(fall) > 3 and len(rise) > 3 and fall.mean() > 2 * rise.mean():
        return "leverage"
    return None


def test_volatility_kind_branches():
    # steady steps: none, even with printing noise under 0.02
    assert an.volatility_kind(100 + 0.5 * np.arange(40) + np.resize([0, 0.004], 40)) == "none"
    # three days (two changes) are too few to call steady; four days of equal steps are steady
    assert an.volatility_kind(np.array([0.0, 1.0, 3.0])) == "constant"
    assert an.volatility_kind(np.array([0.0, 1.0, 2.0, 3.0])) == "none"
    # steps wobbling by +-0.015 (sd of their changes 0.03 > 0.02) are not steady
    assert an.volatility_kind(np.cumsum(1 + 0.015 * np.resize([1.0, -1.0], 40))) != "none"
    # changes growing from 1 to 3 in size: variance ratio 4-ish, Spearman rho ~1
    d = np.resize([1.0, -1.0], 60) * np.linspace(1, 3, 60)
    assert an.volatility_kind(np.cumsum(d)) == "increasing"
    d = np.resize([1.0, -1.0], 60) * np.linspace(3, 1, 60)  # shrinking: not increasing
    assert an.volatility_kind(np.cumsum(d)) != "increasing"
    # leverage: after each fall a move of 2.1 against 1 after each rise (> 2x); 1.9x is not
    for big, lev in ((2.1, True), (1.9, False)):
        d = np.tile([-1.0, big], 30)
        assert (an.volatility_kind(np.cumsum(d)) == "leverage") is lev
    # a rise of exactly 0 counts as a rise (>= 0)
    d = np.tile([0.0, 1.0, -1.0, 3.0], 15)
    fall, rise = np.abs(d[1:][d[:-1] < 0]), np.abs(d[1:][d[:-1] >= 0])
    assert fall.mean() > 2 * rise.mean()
    assert an.volatility_kind(np.cumsum(d)) == "leverage"
    rng = np.random.default_rng(10)
    seen = set()
    for _ in range(150):
        n = int(rng.integers(8, 60))
        scale = np.linspace(1, rng.uniform(0.5, 4), n)
        d = rng.normal(0, 1, n) * scale
        d = np.where(np.roll(d, 1) < 0, d * rng.uniform(1, 3), d)
        x = np.cumsum(d)
        want = ref_volatility(x)
        got = an.volatility_kind(x)
        if want is not None:
            assert got == want
        else:
            assert got in ("clustered", "constant")
            assert (got == "clustered") is (an.arch_p(x) < 0.05)
        seen.add(want)
    assert {"increasing", "leverage", None} <= seen


def test_volatility_clustered_reads_the_arch_p(monkeypatch):
    d = np.random.default_rng(11).normal(0, 1, 60)
    x = np.cumsum(d)
    assert ref_volatility(x) is None
    for p, kind in ((np.nextafter(0.05, 0), "clustered"), (0.05, "constant"), (0.09, "constant")):
        monkeypatch.setattr(an, "arch_p", lambda x, v=p: v)
        assert an.volatility_kind(x) == kind


def test_fat_tails_threshold(monkeypatch):
    for k, fat in ((1.5, False), (np.nextafter(1.5, 2), True), (2.5, True), (1.0, False)):
        monkeypatch.setattr(an, "excess_kurtosis", lambda x, v=k: v)
        assert bool(an.has_fat_tails(np.zeros(3))) is fat


def test_statistical_kind_rules(monkeypatch):
    state = {}
    monkeypatch.setattr(an, "is_stationary", lambda x: state["stationary"])
    monkeypatch.setattr(an, "has_fat_tails", lambda x: state["fat"])
    monkeypatch.setattr(an, "has_seasonality", lambda x: state["seasonal"])
    monkeypatch.setattr(an, "trend_fit", lambda x: {"slope": 1.0, "r2": state["r2"], "p": 0.0})
    for stationary, fat, seasonal, r2, kind in (
        (True, True, True, 0.9, "fat_tailed"),
        (True, False, True, 0.9, "stationary"),
        (False, True, True, 0.3, "trend_and_seasonality"),
        (False, False, True, np.nextafter(0.3, 0), "seasonal"),
        (False, False, False, 0.3, "changing_mean"),
        (False, False, False, 0.29, "changing_variance"),
        (False, False, False, 0.59, "changing_mean"),
    ):
        state.update(stationary=stationary, fat=fat, seasonal=seasonal, r2=r2)
        assert an.statistical_kind(np.zeros(3)) == kind


# --------------------------------------------------------------------------------------
# Two series
# --------------------------------------------------------------------------------------


def test_cross_lag_against_a_looped_pearson_r():
    rng = np.random.default_rng(12)
    for n in (12, 17, 18, 40):
        for _ in range(6):
            a = rng.normal(0, 1, n)
            lag = int(rng.integers(-8, 9))
            b = np.roll(a, lag) * rng.choice([-1, 1]) + rng.normal(0, 0.5, n)
            got = an.cross_lag(a, b)
            want = ref_cross_lag(a, b)
            assert got[0] == want[0] and got[1] == pytest.approx(want[1], abs=1e-12)
    # lag 8 is scanned, 9 is not
    a = rng.normal(0, 1, 60)
    assert an.cross_lag(a[:-8], a[8:])[0] == -8 and an.cross_lag(a[8:], a[:-8])[0] == 8
    assert an.cross_lag(a[:-9], a[9:])[0] != -9
    # ten overlapping days are enough; nine are not (n = 18: lags beyond 8 never, 8 is 10 days)
    a, b = rng.normal(0, 1, 18), rng.normal(0, 1, 18)
    b[8:] = -a[:10] + 1e-3 * b[8:]
    assert an.cross_lag(a, b)[0] == 8


def test_half_correlations_are_pearson_of_each_half():
    rng = np.random.default_rng(13)
    for n in (20, 21):
        a, b = rng.normal(0, 1, n), rng.normal(0, 1, n)
        h = n // 2
        r1, r2 = an.half_correlations(a, b)
        assert r1 == pytest.approx(pearson(a[:h], b[:h]), abs=1e-12)
        assert r2 == pytest.approx(pearson(a[h:], b[h:]), abs=1e-12)


def columns_of(*arrays):
    return {f"V{i}": list(a) for i, a in enumerate(arrays)}


def test_detect_and_classify_two_series():
    rng = np.random.default_rng(14)
    analyst = an.StatisticalAnalyst()
    seen = set()
    for _ in range(200):
        n = int(rng.integers(20, 60))
        a = rng.normal(0, 1, n)
        b = rng.uniform(-1.5, 1.5) * a + rng.normal(0, 1, n)
        r = pearson(a, b)
        cols = columns_of(a, b)
        assert bool(analyst._detect("correlation", cols)) is (abs(r) >= 0.3)
        assert analyst._classify("correlation", cols) == ("positive" if r > 0 else "negative")
        lag, rr = ref_cross_lag(a, b)
        assert bool(analyst._detect("cross_correlation", cols)) is (lag != 0)
        assert analyst._classify("cross_correlation", cols) == (
            ("positive" if rr > 0 else "negative") + ("_lagged" if lag else "_direct")
        )
        h = n // 2
        r1, r2 = pearson(a[:h], b[:h]), pearson(a[h:], b[h:])
        assert bool(analyst._detect("dynamic_correlation", cols)) is (abs(abs(r1) - abs(r2)) > 0.4)
        assert analyst._classify("dynamic_correlation", cols) == (
            "correlated_first_half" if abs(r1) > abs(r2) else "correlated_second_half"
        )
        seen.add((0.3 <= abs(r) < 0.6, 0.4 < abs(abs(r1) - abs(r2)) <= 0.8))
    assert len(seen) == 4
    # a lagged negative cross-correlation
    a = rng.normal(0, 1, 50)
    assert analyst._classify("cross_correlation", columns_of(a[3:], -a[:-3])) == "negative_lagged"
    assert analyst._classify("cross_correlation", columns_of(a, 2 * a)) == "positive_direct"


# --------------------------------------------------------------------------------------
# Answering prompts
# --------------------------------------------------------------------------------------


def a_prompt(
    values, task, dataset="trend", sub="linear_up", fmt="csv", prompting="zero_shot", **kw
):
    from tsrate.suites.understanding import generators as g
    from tsrate.suites.understanding.tasks import build_prompts

    start = dt.date(2021, 3, 1)
    s = g.Sample(
        dataset,
        "test",
        kw.get("index", 0),
        kw.get("seed", 3),
        start,
        np.asarray(values, float),
        sub,
        kw.get("labels", {}),
        "q",
        "n",
    )
    (p,) = build_prompts(
        s, (fmt,), kw.get("decimals", 2), kw.get("pool", {}), tasks=(task,), promptings=(prompting,)
    )
    return p


def test_retrieval_and_extremes_are_read_from_the_table():
    values = [3.5, -1.25, 7.0, 7.0, 2.0, -1.25, 0.5]
    analyst = an.StatisticalAnalyst()
    p = a_prompt(values, "retrieval")
    q = int(np.random.default_rng([3, 7]).integers(0, 7))
    assert analyst.answer(p) == f"{values[q]:.2f}"  # as printed, at the 2 decimals
    assert analyst.answer(a_prompt(values, "arithmetic_min")) == "-1.25 on 2021-03-02"
    assert analyst.answer(a_prompt(values, "arithmetic_max")) == "7.00 on 2021-03-03"
    # a date the table does not hold
    p = dataclasses.replace(p, text=p.text.replace(f"on {p.expected['date']}?", "on 2030-01-01?"))
    assert analyst.answer(p) == "the date is not in the series"
    # chain of thought: one reasoning line naming the days read, then the same answer
    cot = a_prompt(values, "arithmetic_max", prompting="cot")
    assert analyst.answer(cot) == (
        "I read the 7 days of the series from the csv block and applied the standard "
        "statistics to the arithmetic_max question.\nAnswer: 7.00 on 2021-03-03"
    )


def test_search_answers_whether_the_printed_value_is_in_the_table():
    analyst = an.StatisticalAnalyst()
    values = [-2.5, 1.0, 3.25, 0.0]
    for index, labels in (
        (0, {"query_index": 0, "extreme": "max"}),
        (8, {"query_index": 0, "extreme": "max"}),
    ):
        p = a_prompt(values, "search", dataset="outlier", sub="max_q1", labels=labels, index=index)
        assert analyst.answer(p) == p.expected["answer"]
    p = a_prompt(
        values, "search", dataset="outlier", sub="max_q1", labels={"query_index": 0}, index=0
    )
    assert "-2.50" in p.text and analyst.answer(p) == "yes"
    p = dataclasses.replace(p, text=p.text.replace("Does the value -2.50", "Does the value -2.49"))
    assert analyst.answer(p) == "no"
    p = dataclasses.replace(p, text=p.text.replace("Does the value -2.49", "Does the value 3.25"))
    assert analyst.answer(p) == "yes"


def test_classification_outside_the_options_is_none_of_these(monkeypatch):
    analyst = an.StatisticalAnalyst()
    p = a_prompt(np.arange(30.0), "classification", dataset="anomalies", sub="single_spike")
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "double_spike")
    assert analyst.answer(p) == "double_spike"
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "wobble")
    assert analyst.answer(p) == "none of these"
    up = a_prompt(0.5 * np.arange(30.0), "classification", dataset="trend", sub="linear_up")
    down = a_prompt(-0.5 * np.arange(30.0), "classification", dataset="trend", sub="linear_down")
    assert analyst.answer(up) == "up" and analyst.answer(down) == "down"
    flat = a_prompt(np.zeros(30), "classification", dataset="trend", sub="linear_down")
    assert analyst.answer(flat) == "down"  # slope 0 is not > 0


def test_detection_dispatches_on_the_question(monkeypatch):
    analyst = an.StatisticalAnalyst()
    stubs = {
        "has_trend": ("trend", "trend"),
        "has_seasonality": ("seasonality", "seasonality"),
        "has_break": ("structural_breaks", "structural_breaks"),
        "has_fat_tails": ("statistical_properties", "fat_tails"),
        "is_stationary": ("statistical_properties", "stationarity"),
    }
    for name, (dataset, feature) in stubs.items():
        for verdict in (True, False):
            monkeypatch.setattr(an, name, lambda x, v=verdict: v)
            ps = [p for p in _detections(dataset) if p.feature == feature]
            assert [analyst.answer(p) for p in ps] == ["yes" if verdict else "no"], name
    for kind, present in (("none", False), ("single_spike", True)):
        monkeypatch.setattr(an, "anomaly_kind", lambda x, k=kind: k)
        assert [analyst.answer(p) for p in _detections("anomalies")] == ["yes" if present else "no"]
    for kind, changes in (
        ("constant", False),
        ("none", False),
        ("clustered", True),
        ("leverage", True),
    ):
        monkeypatch.setattr(an, "volatility_kind", lambda x, k=kind: k)
        assert [analyst.answer(p) for p in _detections("volatility")] == [
            "yes" if changes else "no"
        ]


def _detections(dataset):
    from tsrate.suites.understanding import generators as g
    from tsrate.suites.understanding.tasks import build_prompts

    s = g.Sample(
        dataset,
        "test",
        0,
        3,
        dt.date(2021, 3, 1),
        np.arange(30.0),
        "x",
        {"fat_tails": 1, "stationary": 1},
        "q",
        "n",
    )
    return build_prompts(s, ("csv",), 2, {}, tasks=("detection",))


def test_feature_flags(monkeypatch):
    analyst = an.StatisticalAnalyst()
    assert analyst._feature_flags({"a": [1.0, 2.0], "b": [2.0, 1.0]}) == {"multivariate": True}
    monkeypatch.setattr(an, "has_trend", lambda x: True)
    monkeypatch.setattr(an, "has_seasonality", lambda x: False)
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "none")
    monkeypatch.setattr(an, "has_break", lambda x: True)
    monkeypatch.setattr(an, "volatility_kind", lambda x: "constant")
    monkeypatch.setattr(an, "has_fat_tails", lambda x: False)
    flags = {
        "multivariate": False,
        "trend": True,
        "seasonality": False,
        "anomalies": False,
        "structural_breaks": True,
        "volatility": False,
        "fat_tails": False,
    }
    assert analyst._feature_flags({"Value": [1.0, 2.0]}) == flags
    monkeypatch.setattr(an, "anomaly_kind", lambda x: "level_shift")
    monkeypatch.setattr(an, "volatility_kind", lambda x: "none")
    flags.update(anomalies=True)
    assert analyst._feature_flags({"Value": [1.0, 2.0]}) == flags
    monkeypatch.setattr(an, "volatility_kind", lambda x: "increasing")
    flags.update(volatility=True)
    assert analyst._feature_flags({"Value": [1.0, 2.0]}) == flags


def test_match_numbers_counts_the_facts_each_description_states():
    dates = [dt.date(2021, 3, 1) + dt.timedelta(days=i) for i in range(4)]
    columns = {"Value": [2.0, 9.5, -1.0, 3.0]}
    facts = ["2021-03-01", "2021-03-04", "-1.00", "9.50", "2021-03-03", "2021-03-02"]
    options = {
        "A": "starts 2021-03-01, peaks 9.50",  # 2 facts
        "B": "from 2021-03-01 to 2021-03-04, low -1.00 on 2021-03-03",  # 4 facts
        "C": "nothing here",
        "D": "high 9.50 on 2021-03-02, ends 2021-03-04",  # 3 facts
    }
    assert sum(f in options["B"] for f in facts) == 4
    assert an.StatisticalAnalyst._match_numbers(dates, columns, options) == "B"
    options["D"] += ", from 2021-03-01 low -1.00"  # now 5
    assert an.StatisticalAnalyst._match_numbers(dates, columns, options) == "D"
    # a tie keeps the first letter
    assert an.StatisticalAnalyst._match_numbers(dates, columns, {"A": "x", "B": "y"}) == "A"
    # the second series' extremes count too
    two = {"Series1": [2.0, 9.5, -1.0, 3.0], "Series2": [0.0, 0.0, 0.0, 7.25]}
    assert an.StatisticalAnalyst._match_numbers(dates, two, {"A": "x", "B": "reaches 7.25"}) == "B"


def test_match_keywords_scores_agreement_with_the_detected_features():
    flags = {"trend": True, "seasonality": False, "anomalies": True}
    options = {
        "A": "A series that rises with a seasonal cycle.",  # +1 -1 = 0
        "B": "A series with a spike.",  # +1
        "C": "A volatile series.",  # volatility not flagged: -1
        "D": "Two time series.",  # multivariate not flagged: -1
    }
    assert an.StatisticalAnalyst._match_keywords(flags, options) == "B"
    options["A"] = "It rises, with an OUTLIER."  # +2
    assert an.StatisticalAnalyst._match_keywords(flags, options) == "A"
    # "no clear trend" is no mention of a trend: 0, ahead of -1s
    flags = {"trend": False}
    options = {"A": "A series with a trend.", "B": "A series with no clear trend.", "C": "A cycle."}
    assert an.StatisticalAnalyst._match_keywords(flags, options) == "B"


def test_random_answerer_draws_from_the_prompt_keys_digest():
    import hashlib

    values = [3.5, -1.25, 7.0, 2.0]
    for seed in (0, 5):
        rnd = an.RandomAnswerer(seed)
        assert rnd.fingerprint() == f"und_random-v2-seed{seed}"
        for task in ("retrieval", "arithmetic_max", "arithmetic_min"):
            p = a_prompt(values, task)
            digest = hashlib.sha256(f"{seed}|{p.prompt_key}".encode()).digest()
            i = int(np.random.default_rng(int.from_bytes(digest[:8], "little")).integers(0, 4))
            want = f"{values[i]:.{p.decimals}f}" + (
                "" if task == "retrieval" else f" on {dt.date(2021, 3, 1 + i)}"
            )
            assert rnd.answer(p) == want
        p = a_prompt(values, "detection")
        digest = hashlib.sha256(f"{seed}|{p.prompt_key}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        assert rnd.answer(p) == str(rng.choice(p.options))
        cot = a_prompt(values, "detection", prompting="cot")
        assert rnd.answer(cot).startswith("I pick an admissible answer at random.\nAnswer: ")


def test_reference_answerers_are_always_available_and_answer_in_order():
    analyst, rnd = an.StatisticalAnalyst(), an.RandomAnswerer()
    assert analyst.availability().available and rnd.availability().available
    assert rnd.seed == 0 and rnd.fingerprint() == "und_random-v2-seed0"
    prompts = [
        a_prompt([1.0, 4.0, 2.0], "arithmetic_max"),
        a_prompt([1.0, 4.0, 2.0], "arithmetic_min"),
    ]
    assert analyst.answer_all(prompts) == ["4.00 on 2021-03-02", "1.00 on 2021-03-01"]
    assert rnd.answer_all(prompts) == [rnd.answer(p) for p in prompts]


def test_search_looks_in_every_column_of_the_table():
    """Search is asked of one-column position sets, but the analyst reads whatever table
    the prompt holds: a value in any column appears in the series."""
    p = a_prompt([1.0, 2.0], "search", dataset="outlier", sub="max_q1", labels={"query_index": 0})
    block = "Date,Value\n2021-03-01,1.00\n2021-03-02,2.00\n"
    assert block in p.text
    two = "Date,A,B\n2021-03-01,1.00,5.00\n2021-03-02,2.00,6.00\n"
    q = dataclasses.replace(p, text=p.text.replace(block, two))
    assert an.StatisticalAnalyst().answer(q) == "yes"  # 1.00 is in A only
    q = dataclasses.replace(q, text=q.text.replace("Does the value 1.00", "Does the value 6.00"))
    assert an.StatisticalAnalyst().answer(q) == "yes"  # 6.00 is in B only


def test_search_matches_numbers_to_within_float_parsing_only():
    """Printed values and the asked value are decimal strings: equal ones parse to equal
    floats, so only a difference under 1e-9 counts as the same number; 1e-9 and 1.5e-9
    away do not appear."""
    p = a_prompt([0.0, 1.0], "search", dataset="outlier", sub="max_q1", labels={"query_index": 0})
    assert "Does the value 0.00 appear" in p.text
    analyst = an.StatisticalAnalyst()
    for asked, answer in (("0.0000000005", "yes"), ("0.000000001", "no"), ("1.0000000015", "no")):
        q = dataclasses.replace(
            p, text=p.text.replace("Does the value 0.00", f"Does the value {asked}")
        )
        assert analyst.answer(q) == answer, asked


def test_matching_prompts_are_answered_from_the_table():
    """Intra-dataset matching: the own description states the series' first and last
    dates, extremes and their dates, so it holds the most facts; cross-dataset matching
    answers with a letter (its keyword score)."""
    from tsrate.suites.understanding import generators as g
    from tsrate.suites.understanding.tasks import build_prompts

    pool = {
        d: g.generate_split(d, "test", 5, 4)
        for d in ("trend", "seasonality", "anomalies", "volatility")
    }
    analyst = an.StatisticalAnalyst()
    for s in pool["trend"]:
        (intra,) = build_prompts(s, ("csv",), 2, pool, tasks=("matching_intra",))
        assert analyst.answer(intra) == intra.expected["answer"]
        (cross,) = build_prompts(s, ("csv",), 2, pool, tasks=("matching_cross",))
        assert analyst.answer(cross) in ("A", "B", "C", "D")


def test_correlation_detection_at_exactly_0_3(monkeypatch):
    """|r| >= 0.3 is a correlation: r stubbed to exactly +-0.3 and just under."""
    analyst = an.StatisticalAnalyst()
    cols = columns_of(np.arange(5.0), np.arange(5.0))
    for r, found in ((0.3, True), (-0.3, True), (np.nextafter(0.3, 0), False), (-0.29, False)):
        monkeypatch.setattr(an.np, "corrcoef", lambda a, b, v=r: np.array([[1.0, v], [v, 1.0]]))
        assert bool(analyst._detect("correlation", cols)) is found, r


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


def test_dynamic_correlation_and_skewness_thresholds_exactly(monkeypatch):
    """Dynamic correlation needs the halves' |r| to differ by more than 0.4 (0.9 vs 0.5 is
    exactly 0.4: no); a regime shift needs the halves' skewness to differ by more than 1
    (1.5 vs 0.5 is exactly 1: no)."""
    analyst = an.StatisticalAnalyst()
    cols = columns_of(np.arange(10.0), np.arange(10.0))
    for r1, r2, changes in (
        (0.9, 0.5, False),
        (-0.9, 0.5, False),
        (0.95, 0.5, True),
        (0.1, -0.55, True),
    ):
        monkeypatch.setattr(an, "half_correlations", lambda a, b, v=(r1, r2): v)
        assert bool(analyst._detect("dynamic_correlation", cols)) is changes, (r1, r2)
    n, k = 40, 15
    monkeypatch.setattr(an, "changepoint", lambda x: (k, 30.0))
    monkeypatch.setattr(an, "is_stationary", lambda v: True)
    monkeypatch.setattr(an, "has_trend", lambda v: False)
    for sa, sb, kind in (
        (1.5, 0.5, "parameter_shift"),
        (1.5, 0.4, "regime_shift"),
        (-0.5, 0.5, "parameter_shift"),
    ):
        monkeypatch.setattr(an.stats, "skew", lambda v, s=(sa, sb): s[0] if len(v) == k else s[1])
        assert an.break_kind(np.zeros(n)) == kind, (sa, sb)


def test_an_uncorrelated_pair_is_classified_negative():
    """Positive needs r > 0: orthogonal centred series (r exactly 0) are 'negative'."""
    a, b = np.array([1.0, -1.0, 1.0, -1.0]), np.array([1.0, 1.0, -1.0, -1.0])
    assert np.corrcoef(a, b)[0, 1] == 0.0
    assert an.StatisticalAnalyst()._classify("correlation", columns_of(a, b)) == "negative"


def test_cross_correlation_sign_and_steady_step_thresholds_exactly(monkeypatch):
    """A cross-correlation of exactly 0 is not positive; steps whose changes have an sd of
    exactly 0.02 are not steady (the rule is < 0.02). The statistics are stubbed."""
    analyst = an.StatisticalAnalyst()
    cols = columns_of(np.arange(12.0), np.arange(12.0))
    for lag, r, label in (
        (0, 0.0, "negative_direct"),
        (2, 0.0, "negative_lagged"),
        (-1, 0.1, "positive_lagged"),
    ):
        monkeypatch.setattr(an, "cross_lag", lambda a, b, v=(lag, r): v)
        assert analyst._classify("cross_correlation", cols) == label
    monkeypatch.undo()
    x = np.cumsum(np.random.default_rng(17).normal(0, 1, 40))
    monkeypatch.setattr(an.np, "std", lambda v: 0.02)
    assert an.volatility_kind(x) != "none"
    monkeypatch.setattr(an.np, "std", lambda v: np.nextafter(0.02, 0))
    assert an.volatility_kind(x) == "none"


def test_match_numbers_reads_the_first_and_last_dates_and_ties_go_to_the_second_half(monkeypatch):
    dates = [dt.date(2021, 3, 1) + dt.timedelta(days=i) for i in range(4)]
    columns = {"Value": [2.0, 9.5, -1.0, 3.0]}  # extremes on days 2 and 3, not 1 or 4
    match = an.StatisticalAnalyst._match_numbers
    assert match(dates, columns, {"A": "nothing", "B": "starts on 2021-03-01"}) == "B"
    assert match(dates, columns, {"A": "nothing", "B": "ends on 2021-03-04"}) == "B"
    # dynamic correlation: equal |r| in both halves is not 'first half'
    monkeypatch.setattr(an, "half_correlations", lambda a, b: (0.5, -0.5))
    cols = columns_of(np.arange(10.0), np.arange(10.0))
    assert (
        an.StatisticalAnalyst()._classify("dynamic_correlation", cols) == "correlated_second_half"
    )


def test_increasing_volatility_ratio_at_its_edges(monkeypatch):
    """Increasing needs var(second half) / var(first half) > 2.5, the first floored at
    1e-12: changes of 1 for 20 days, then of 2 and 2 + e (variance 3.5e-12) -- a ratio of
    3.5 against the floor; a ratio of exactly 2.5 (variances stubbed) is not increasing.
    The argmin date is a fact for number matching."""
    e = 2 * math.sqrt(3.5e-12)
    d = np.concatenate([np.ones(20), np.resize([2.0, 2.0 + e], 20)])
    assert an.volatility_kind(np.cumsum(np.concatenate([[0.0], d]))) == "increasing"
    dates = [dt.date(2021, 3, 1) + dt.timedelta(days=i) for i in range(4)]
    got = an.StatisticalAnalyst._match_numbers(
        dates, {"Value": [2.0, 9.5, -1.0, 3.0]}, {"A": "nothing", "B": "lowest on 2021-03-03"}
    )
    assert got == "B"
    grow = np.resize([1.0, -1.0], 41) * np.linspace(1, 3, 41)
    x = np.cumsum(np.concatenate([[0.0], grow]))
    assert an.volatility_kind(x) == "increasing"
    monkeypatch.setattr(an.np, "var", lambda v: 2.5 if len(v) == 21 else 1.0)
    assert an.volatility_kind(x) != "increasing"


def test_increasing_volatility_needs_a_rank_correlation_over_0_25(monkeypatch):
    grow = np.resize([1.0, -1.0], 41) * np.linspace(1, 3, 41)
    x = np.cumsum(np.concatenate([[0.0], grow]))
    for rho, increasing in ((0.25, False), (np.nextafter(0.25, 1), True)):
        monkeypatch.setattr(an.stats, "spearmanr", lambda a, b, v=rho: (v, 0.0))
        assert (an.volatility_kind(x) == "increasing") is increasing, rho
