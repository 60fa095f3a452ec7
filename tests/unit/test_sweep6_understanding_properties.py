"""The statistical analyst's rules on volatility, tails, statistical properties and
pairs of series (``understanding/analyst.py``), against the statistics its docstring names,
written out independently (tests/support/sweep6_understanding.py): ARCH's LM test from
statsmodels, Pearson's r and the cross-correlation by loop, skewness from moments. Written
for round 6 of the mutation sweep (tests/planted/sweep6_understanding.json).

As in tests/unit/test_sweep6_understanding_series.py: each rule's arithmetic on random series
against the reference, and each threshold at its exact boundary with the statistic it reads
stubbed to the boundary value.
"""

from __future__ import annotations

import datetime as dt
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from tests.support.sweep6_understanding import (
    columns_of,
    pearson,
    ref_cross_lag,
)
from tsrate.suites.understanding import analyst as an

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


def test_correlation_detection_at_exactly_0_3(monkeypatch):
    """|r| >= 0.3 is a correlation: r stubbed to exactly +-0.3 and just under."""
    analyst = an.StatisticalAnalyst()
    cols = columns_of(np.arange(5.0), np.arange(5.0))
    for r, found in ((0.3, True), (-0.3, True), (np.nextafter(0.3, 0), False), (-0.29, False)):
        monkeypatch.setattr(an.np, "corrcoef", lambda a, b, v=r: np.array([[1.0, v], [v, 1.0]]))
        assert bool(analyst._detect("correlation", cols)) is found, r


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
