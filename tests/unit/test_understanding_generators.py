"""Each generator's series carries the feature it is labelled with (its defining property)."""

from __future__ import annotations

import datetime as dt
import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.diagnostic import het_arch as _het_arch
from statsmodels.tsa.stattools import acf
from statsmodels.tsa.stattools import adfuller as _adfuller

from tsrate import TsrateError
from tsrate.suites.understanding import generators as g

SEED = 11


def adfuller(x):
    return _adfuller(x, result_object=False)


def het_arch(x, nlags):
    """statsmodels' ARCH LM test, without its FutureWarning about the return type."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return _het_arch(x, nlags=nlags)


def samples(dataset: str, kind: str, count: int = 30, **lengths):
    return [g.generate_sample(dataset, "test", i, SEED, kind=kind, **lengths) for i in range(count)]


def test_series_are_seeded_by_their_coordinates_and_carry_descriptions():
    a = g.generate_sample("trend", "test", 3, SEED)
    b = g.generate_sample("trend", "test", 3, SEED)
    c = g.generate_sample("trend", "train", 3, SEED)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.series_key == b.series_key != c.series_key
    assert not np.array_equal(a.values[: c.length], c.values[: a.length])
    for dataset in (*g.UNIVARIATE, *g.MULTIVARIATE):
        for i in range(20):
            s = g.generate_sample(dataset, "validation", i, SEED)
            assert 30 <= s.length <= 150 and np.isfinite(s.values).all()
            assert s.dates[1] - s.dates[0] == dt.timedelta(days=1)
            assert s.sub_feature in {*g.KINDS[dataset], "parameter_shift", "regime_shift"}
            assert s.qualitative and f"from {s.dates[0]} to {s.dates[-1]}" in s.quantitative
            first = next(iter(s.columns.values()))
            low = int(np.argmin(first))
            assert f"{first[low]:.2f} on {s.dates[low]}" in s.quantitative
    with pytest.raises(TsrateError, match="unknown dataset"):
        g.generate_sample("weather", "test", 0, SEED)
    with pytest.raises(TsrateError, match="unknown kind"):
        g.generate_sample("trend", "test", 0, SEED, kind="sideways")


def test_trend_sign_and_shape():
    for s in samples("trend", "linear_up"):
        fit = stats.linregress(np.arange(s.length), s.values)
        assert fit.slope > 0 and fit.pvalue < 1e-3
        assert abs(fit.slope - s.labels["slope"]) < 5 * fit.stderr
        assert 0.1 <= s.labels["slope"] <= 1 and 100 <= s.labels["intercept"] <= 110
    for s in samples("trend", "quadratic_down"):
        t = np.arange(s.length)
        curvature = np.polyfit(t, s.values, 2)[0]
        assert curvature < 0 and s.values[-5:].mean() < s.values[:5].mean()
        assert (s.values > 0).all()  # c raised so the series stays positive
    r2_none = [
        stats.linregress(np.arange(s.length), s.values).rvalue ** 2
        for s in samples("trend", "none")
    ]
    assert np.mean(r2_none) < 0.1


def _dominant_period(x: np.ndarray) -> float:
    from scipy.signal import periodogram

    freqs, power = periodogram(x - x.mean())
    return 1 / freqs[1:][np.argmax(power[1:])]


def test_seasonality_kinds():
    for s in samples("seasonality", "fixed", 20, min_length=120):
        assert abs(_dominant_period(s.values) - s.labels["period"]) / s.labels["period"] < 0.15
    for s in samples("seasonality", "multiple", 20, min_length=120):
        from scipy.signal import periodogram

        freqs, power = periodogram(s.values - s.values.mean())
        top = {round(1 / f) for f in freqs[1:][np.argsort(power[1:])[-4:]]}
        assert any(6 <= p <= 8 for p in top) and any(24 <= p <= 40 for p in top)
    for s in samples("seasonality", "varying_amplitude", 20, min_length=100):
        half = s.length // 2
        ratio = np.std(s.values[half:]) / np.std(s.values[:half])
        assert ratio > 1.3 if s.labels["amplitude_trend"] == "increasing" else ratio < 1 / 1.3
    for s in samples("seasonality", "shifting", 20):
        assert s.labels["final_period"] > 1.25 * s.labels["period"]


def test_spikes_sit_where_labelled_and_level_shifts_persist():
    for kind, count in (("single_spike", 1), ("double_spike", 2), ("triple_spike", 3)):
        for s in samples("anomalies", kind, 20):
            deviation = np.abs(s.values - np.median(s.values))
            assert sorted(np.argsort(deviation)[-count:]) == s.labels["positions"]
            assert all(deviation[p] > 4 for p in s.labels["positions"])  # 8-15 sd spikes
            # consecutive days (Appendix B: "sequences of consecutive anomalies")
            assert np.all(np.diff(s.labels["positions"]) == 1)
            n = len(s.values)
            assert s.labels["positions"][0] >= int(0.1 * n) and s.labels["positions"][-1] < int(
                0.9 * n
            )
    for s in samples("anomalies", "level_shift", 20):
        k = s.labels["start"]
        shift = s.values[k:].mean() - s.values[:k].mean()
        assert abs(shift - s.labels["magnitude"]) < 1.5
    for s in samples("anomalies", "step_spike", 20):
        a, b = s.labels["start"], s.labels["end"]
        assert b - a >= 4  # longer than a triple spike
        inside = s.values[a:b].mean() - np.median(s.values)
        assert (
            abs(inside - s.labels["magnitude"]) < 2
            and abs(np.median(s.values[b:]) - np.median(s.values[:a])) < 1.5
        )
    for s in samples("anomalies", "temporal_disruption", 20):
        a, b = s.labels["start"], s.labels["end"]
        assert np.ptp(s.values[a - 1 : b]) == 0 and b - a >= 8


def test_structural_breaks_change_the_process_at_the_break():
    for s in samples("structural_breaks", "mean_shift", 20):
        k = s.labels["break_index"]
        assert s.sub_feature == "parameter_shift"
        assert abs(s.values[k:].mean() - s.values[:k].mean()) > 3
    for s in samples("structural_breaks", "variance_shift", 20):
        k = s.labels["break_index"]
        assert np.var(s.values[k:]) > 2 * np.var(s.values[:k])  # sd x 4: variance x 16
    before, after = [], []
    for s in samples("structural_breaks", "stationarity_change", 30, min_length=100):
        k = s.labels["break_index"]
        assert s.sub_feature == "regime_shift"
        before.append(adfuller(s.values[:k])[1] < 0.05)
        after.append(adfuller(s.values[k:])[1] < 0.05)
    assert np.mean(before) > 0.8 > 0.3 > np.mean(after)  # white noise, then a random walk
    assert {s.sub_feature for s in samples("structural_breaks", "none", 5)} == {"none"}


def test_garch_volatility_clusters_and_constant_volatility_does_not():
    rng = np.random.default_rng(0)
    r = g.garch_returns(rng, 20_000)
    assert abs(r.var() - 0.1 / (1 - 0.2 - 0.7)) < 0.2  # unconditional variance omega / (1 - a - b)
    squared_acf = acf(r**2, nlags=1, fft=True)[1]
    assert squared_acf > 0.15  # volatility clustering
    assert abs(acf(r, nlags=1, fft=True)[1]) < 0.05  # returns themselves uncorrelated
    assert het_arch(r, nlags=5)[1] < 1e-6

    def mean_squared_acf(kind):
        # lags 2-5: the paper's constant series, cumsum(eps) + eta, has MA(1) changes whose
        # squares correlate at lag 1 only
        values = []
        for s in samples("volatility", kind, 60, min_length=150):
            d = np.diff(s.values)
            values.append(acf((d - d.mean()) ** 2, nlags=5, fft=True)[2:].mean())
        return np.mean(values)

    clustered, constant = mean_squared_acf("clustered"), mean_squared_acf("constant")
    assert clustered > constant + 0.05 and abs(constant) < 0.03
    arch_rejections = np.mean(
        [
            het_arch(np.diff(s.values), nlags=5)[1] < 0.05
            for s in samples("volatility", "clustered", 60, min_length=150)
        ]
    )
    assert arch_rejections > 0.4


def test_leverage_and_increasing_volatility():
    rng = np.random.default_rng(1)
    r = g.leverage_returns(rng, 5000)
    after_fall, after_rise = np.abs(r[1:][r[:-1] < 0]), np.abs(r[1:][r[:-1] >= 0])
    assert after_fall.mean() > 1.5 * after_rise.mean()
    for s in samples("volatility", "increasing", 20, min_length=100):
        d = np.diff(s.values)
        assert np.var(d[len(d) // 2 :]) > 2 * np.var(d[: len(d) // 2])


def test_statistical_properties():
    fat = [
        stats.kurtosis(s.values)
        for s in samples("statistical_properties", "fat_tailed", 40, min_length=100)
    ]
    thin = [
        stats.kurtosis(s.values)
        for s in samples("statistical_properties", "stationary", 40, min_length=100)
    ]
    assert np.median(fat) > 1.5 > 0.5 > np.median(thin)
    stationary = [
        adfuller(s.values)[1] < 0.05
        for s in samples("statistical_properties", "stationary", 30, min_length=100)
    ]
    drifting = [
        adfuller(s.values)[1] < 0.05
        for s in samples("statistical_properties", "changing_mean", 30, min_length=100)
    ]
    assert np.mean(stationary) > 0.9 and np.mean(drifting) < 0.3
    s = samples("statistical_properties", "seasonal", 1)[0]
    assert s.labels == {"fat_tails": False, "stationary": False}


def test_multivariate_relationships():
    for s in samples("correlation", "negative", 20, min_length=60):
        assert np.corrcoef(s.values.T)[0, 1] < -0.3
    for s in samples("cross_correlation", "positive_lagged", 20, min_length=80):
        a, b = s.values[:, 0], s.values[:, 1]
        lags = range(0, 9)
        corr = [np.corrcoef(a[: len(a) - L], b[L:])[0, 1] for L in lags]
        assert int(np.argmax(corr)) == s.labels["lag"] and max(corr) > 0.7
    for s in samples("cross_correlation", "negative_direct", 10, min_length=80):
        assert np.corrcoef(s.values.T)[0, 1] < -0.7
    for s in samples("dynamic_correlation", "correlated_second_half", 20, min_length=100):
        k = s.labels["switch_index"]
        first = abs(np.corrcoef(s.values[:k].T)[0, 1])
        second = abs(np.corrcoef(s.values[k:].T)[0, 1])
        assert second > first + 0.3


@pytest.mark.parametrize("kind", g.POSITION)
def test_position_sets_place_the_extreme_and_the_query_by_quadrant(kind):
    for index in range(16):
        s = g.generate_sample(kind, "test", index, SEED, position_length=100)
        extreme, quadrant = s.labels["extreme"], index % 8 // 2 + 1
        assert extreme == ("max", "min")[index % 2] and s.length == 100
        position = int(np.argmax(s.values) if extreme == "max" else np.argmin(s.values))
        assert g.quadrant_of(s.labels["query_index"], 100) == quadrant
        if kind.startswith("monotone"):
            assert (
                s.labels["extreme_quadrant"] in (1, 4)
                and g.quadrant_of(position, 100) == s.labels["extreme_quadrant"]
            )
            if kind == "monotone":
                assert (np.diff(s.values) > 0).all() or (np.diff(s.values) < 0).all()
        else:
            assert g.quadrant_of(position, 100) == quadrant == s.labels["extreme_quadrant"]
    assert [g.quadrant_of(i, 8) for i in range(8)] == [1, 1, 2, 2, 3, 3, 4, 4]


# ---------------------------------------------------------------------------------------
# Parameters recovered by independent estimators (a changed coefficient fails here)
# ---------------------------------------------------------------------------------------


def garch_mle(r: np.ndarray) -> tuple[float, float, float]:
    """(omega, alpha, beta) of a GARCH(1,1) by direct Gaussian maximum likelihood (written
    here, independent of the generator; variance started at the sample variance)."""
    from scipy.optimize import minimize

    def nll(theta):
        omega, alpha, beta = theta
        if omega <= 0 or alpha < 0 or beta < 0 or alpha + beta >= 1:
            return 1e12
        var = np.empty_like(r)
        var[0] = r.var()
        for t in range(1, len(r)):
            var[t] = omega + alpha * r[t - 1] ** 2 + beta * var[t - 1]
        return 0.5 * np.sum(np.log(var) + r**2 / var)

    fit = minimize(nll, x0=[0.05, 0.1, 0.8], method="Nelder-Mead", options={"maxiter": 2000})
    return tuple(float(v) for v in fit.x)


def test_garch_parameters_are_recovered_by_maximum_likelihood():
    r = g.garch_returns(np.random.default_rng(5), 8000)
    omega, alpha, beta = garch_mle(r)
    assert alpha == pytest.approx(0.2, abs=0.05) and beta == pytest.approx(0.7, abs=0.06)
    assert omega == pytest.approx(0.1, abs=0.04)
    # the clustered volatility series: returns = scale x GARCH returns, scale in its labels
    s = g.generate_sample("volatility", "test", 0, SEED, kind="clustered", max_length=150)
    assert s.labels["scale"] == 1.0 and (s.labels["alpha"], s.labels["beta"]) == (0.2, 0.7)
    returns = np.diff(np.concatenate([[100.0], s.values])) / s.labels["scale"]
    assert returns.var() == pytest.approx(1.0, rel=0.9)  # omega / (1 - a - b) = 1


def test_stationary_ar1_coefficient_and_fat_tail_degrees_of_freedom():
    from statsmodels.tsa.ar_model import AutoReg

    rng = np.random.default_rng(3)
    x = g.ar1(rng, 20_000, 0.4, 2.0)
    fit = AutoReg(x, lags=1).fit()
    assert fit.params[1] == pytest.approx(0.4, abs=0.02)
    assert np.sqrt(fit.sigma2) == pytest.approx(2.0, rel=0.05)
    # the fat-tailed set: Student t with 3 degrees of freedom (scipy's fit)
    values = np.concatenate(
        [s.values - s.values.mean() for s in samples("statistical_properties", "fat_tailed", 60)]
    )
    df, _, scale = stats.t.fit(values, floc=0.0)
    assert df == pytest.approx(3.0, abs=1.0) and scale == pytest.approx(2.0, rel=0.2)


def test_no_volatility_moves_without_random_changes():
    from tsrate.suites.understanding.analyst import volatility_kind
    from tsrate.suites.understanding.tasks import CLASSIFICATIONS, DETECTIONS

    for s in samples("volatility", "none", 10):
        steps = np.diff(s.values)
        assert np.ptp(steps) < 1e-9 and abs(steps[0]) <= 0.2  # one steady step a day
        assert not DETECTIONS["volatility"][0].present(s)  # volatility does not change
        assert CLASSIFICATIONS["volatility"].truth(s) == "none"
        assert volatility_kind(np.round(s.values, 2)) == "none"
    # the other kinds are not mistaken for it
    for kind in ("constant", "clustered", "increasing"):
        assert all(
            volatility_kind(np.round(s.values, 2)) != "none"
            for s in samples("volatility", kind, 10)
        )


def _segments(kind: str, n: int = 4000, seed: int = 2):
    values, cls, labels, _, _ = g.structural_breaks(np.random.default_rng(seed), n, kind)
    k = labels["break_index"]
    level = values[:k].mean()  # the process before the break has mean 0: this is the level
    return cls, values[:k] - level, values[k:] - level


def test_the_four_appendix_b_break_kinds_change_what_they_name():
    # mean and variance together: both moments move at the break (a parameter shift)
    for s in samples("structural_breaks", "mean_variance_shift", 20):
        k = s.labels["break_index"]
        assert s.sub_feature == "parameter_shift"
        assert abs(s.values[k:].mean() - s.values[:k].mean()) > 3
        assert np.var(s.values[k:]) > 3 * np.var(s.values[:k])  # sd x 3: variance x 9
    # linearity: before, OLS slopes of x_t on x_{t-1} agree for positive and negative
    # x_{t-1} (linear AR(1), 0.5); after, they follow the threshold AR (0.9 / -0.5)
    cls, before, after = _segments("linearity_change")
    assert cls == "regime_shift"

    def slopes(x):
        lag, now = x[:-1], x[1:]
        return [stats.linregress(lag[side], now[side]).slope for side in (lag > 0, lag <= 0)]

    up, down = slopes(before)
    assert abs(up - down) < 0.25 and up == pytest.approx(0.5, abs=0.15)
    up, down = slopes(after)
    assert up == pytest.approx(g.BREAK_THRESHOLD_AR[0], abs=0.1)
    assert down == pytest.approx(g.BREAK_THRESHOLD_AR[1], abs=0.15)
    # error correlation: lag-1 autocorrelation 0 before, theta / (1 + theta^2) after (MA(1))
    cls, before, after = _segments("error_correlation_change")
    theta = g.BREAK_MA_THETA
    assert cls == "regime_shift" and abs(acf(before, nlags=1)[1]) < 0.06
    assert acf(after, nlags=1)[1] == pytest.approx(theta / (1 + theta**2), abs=0.06)
    assert abs(acf(after, nlags=2)[2]) < 0.06  # MA(1): nothing at lag 2
    # variance type: homoskedastic before, GARCH after (Engle's ARCH test; squared acf)
    cls, before, after = _segments("variance_type_change")
    assert cls == "regime_shift"
    assert het_arch(before, nlags=5)[1] > 0.01 and het_arch(after, nlags=5)[1] < 1e-6
    assert acf((after - after.mean()) ** 2, nlags=1)[1] > 0.15
    garch = g.BREAK_GARCH
    assert after.var() == pytest.approx(
        garch["omega"] / (1 - garch["alpha"] - garch["beta"]), rel=0.35
    )


# ---------------------------------------------------------------------------------------
# The kinds not covered above, each against its own independent statistic
# ---------------------------------------------------------------------------------------


def _sine_amplitude(x: np.ndarray, period: float) -> float:
    """Amplitude of the period-``period`` sine in ``x`` by least squares on sin and cos
    (numpy's lstsq, independent of the generator)."""
    t = np.arange(len(x), dtype=float)
    design = np.column_stack(
        [np.sin(2 * np.pi * t / period), np.cos(2 * np.pi * t / period), np.ones(len(x))]
    )
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    return float(np.hypot(coef[0], coef[1]))


def test_the_other_break_kinds_change_what_they_name():
    from statsmodels.tsa.ar_model import AutoReg

    # seasonal amplitude: the period-10 sine's amplitude rises from 2 to 8 at the break
    cls, before, after = _segments("seasonality_amplitude_shift")
    assert cls == "parameter_shift"
    assert _sine_amplitude(before, 10) == pytest.approx(2.0, abs=0.15)
    assert _sine_amplitude(after, 10) == pytest.approx(8.0, abs=0.3)
    assert _dominant_period(before) == pytest.approx(10, rel=0.05)
    # autocorrelation: white noise (AR coefficient 0), then AR(1) with phi 0.95
    cls, before, after = _segments("autocorrelation_shift")
    assert cls == "parameter_shift"
    assert AutoReg(before, lags=1).fit().params[1] == pytest.approx(0.0, abs=0.08)
    assert AutoReg(after, lags=1).fit().params[1] == pytest.approx(0.95, abs=0.03)
    # distribution: normal before (no skew), a shifted exponential (scale 3, skew 2) after
    cls, before, after = _segments("distribution_change")
    assert cls == "regime_shift"
    assert abs(stats.skew(before)) < 0.25 and stats.skew(after) == pytest.approx(2.0, abs=0.5)
    assert stats.kstest(before, "norm").pvalue > 0.001
    assert stats.kstest(after, "expon", args=(-3.0, 3.0)).pvalue > 0.001
    assert stats.kstest(after, "norm", args=(0.0, after.std())).pvalue < 1e-6
    # noise -> trend: no slope before, a slope of 0.4-1 a day (either sign) after
    for s in samples("structural_breaks", "noise_trend_change", 20, min_length=100):
        k = s.labels["break_index"]
        assert s.sub_feature == "regime_shift"
        flat = stats.linregress(np.arange(k), s.values[:k])
        sloped = stats.linregress(np.arange(s.length - k), s.values[k:])
        assert abs(flat.slope) < 5 * flat.stderr + 0.02
        assert 0.35 < abs(sloped.slope) < 1.05 and sloped.pvalue < 1e-6
    # seasonal frequency: the dominant period falls from 20 to 5 days at the break
    cls, before, after = _segments("frequency_change")
    assert cls == "regime_shift"
    assert _dominant_period(before) == pytest.approx(20, rel=0.05)
    assert _dominant_period(after) == pytest.approx(5, rel=0.05)
    # none: one AR(1) process (phi 0.3) throughout, the same in both halves
    values, cls, labels, _, _ = g.structural_breaks(np.random.default_rng(4), 4000, "none")
    assert cls == "none" and labels["break_index"] is None
    for half in (values[:2000], values[2000:]):
        assert AutoReg(half, lags=1).fit().params[1] == pytest.approx(0.3, abs=0.06)
    assert np.var(values[2000:]) == pytest.approx(np.var(values[:2000]), rel=0.15)


def test_the_other_trend_seasonality_and_property_kinds():
    for s in samples("trend", "linear_down"):
        fit = stats.linregress(np.arange(s.length), s.values)
        assert fit.slope < 0 and fit.pvalue < 1e-3
        assert abs(fit.slope - s.labels["slope"]) < 5 * fit.stderr
    for s in samples("trend", "quadratic_up"):
        assert np.polyfit(np.arange(s.length), s.values, 2)[0] > 0
        assert s.values[-5:].mean() > s.values[:5].mean()

    # no seasonality: no periodogram peak stands out as a fixed season's does
    def peak_share(x):
        from scipy.signal import periodogram

        power = periodogram(x - x.mean())[1][1:]
        return power.max() / power.sum()

    none = [peak_share(s.values) for s in samples("seasonality", "none", 20, min_length=120)]
    fixed = [peak_share(s.values) for s in samples("seasonality", "fixed", 20, min_length=120)]
    assert max(none) < 0.2 < 0.35 < min(fixed)  # a sine's power sits in 1-2 bins
    for s in samples("statistical_properties", "changing_variance", 20, min_length=100):
        half = s.length // 2
        assert np.var(s.values[half:]) > 2 * np.var(s.values[:half])  # sd x 1 -> 5
    for s in samples("statistical_properties", "seasonal", 20, min_length=100):
        assert _dominant_period(s.values) == pytest.approx(12, rel=0.1)
        assert _sine_amplitude(s.values, 12) == pytest.approx(5.0, abs=1.0)
    for s in samples("statistical_properties", "trend_and_seasonality", 20, min_length=100):
        t = np.arange(s.length)
        fit = stats.linregress(t, s.values)
        assert 0.15 < abs(fit.slope) < 0.55 and fit.pvalue < 1e-6
        detrended = s.values - (fit.intercept + fit.slope * t)
        assert _dominant_period(detrended) == pytest.approx(12, rel=0.1)


def test_the_other_pair_kinds():
    for s in samples("correlation", "positive", 20, min_length=60):
        assert np.corrcoef(s.values.T)[0, 1] > 0.3
    independent = [
        abs(np.corrcoef(s.values.T)[0, 1])
        for s in samples("correlation", "none", 40, min_length=60)
    ]
    assert np.mean(independent) < 0.2  # ~ 0.8 / sqrt(n) under independence
    for s in samples("cross_correlation", "positive_direct", 10, min_length=80):
        assert np.corrcoef(s.values.T)[0, 1] > 0.7
    for s in samples("cross_correlation", "negative_lagged", 20, min_length=80):
        a, b = s.values[:, 0], s.values[:, 1]
        corr = [np.corrcoef(a[: len(a) - L], b[L:])[0, 1] for L in range(0, 9)]
        assert int(np.argmin(corr)) == s.labels["lag"] >= 2 and min(corr) < -0.7
    for s in samples("dynamic_correlation", "correlated_first_half", 20, min_length=100):
        k = s.labels["switch_index"]
        first = abs(np.corrcoef(s.values[:k].T)[0, 1])
        second = abs(np.corrcoef(s.values[k:].T)[0, 1])
        assert first > second + 0.3
    for s in samples("dynamic_correlation", "constant", 20, min_length=100):
        half = s.length // 2
        assert s.labels["switch_index"] is None
        for part in (s.values[:half], s.values[half:]):
            assert abs(np.corrcoef(part.T)[0, 1]) > 0.6


def test_leverage_series_are_scaled_as_labelled():
    for s in samples("volatility", "leverage", 20, min_length=120):
        returns = np.diff(np.concatenate([[100.0], s.values])) / s.labels["scale"]
        assert s.labels["scale"] == 10.0
        # a fall raises the next move's sd by x 1.3, a rise lowers it by x 0.7
        after_fall = np.abs(returns[1:][returns[:-1] < 0]).mean()
        after_rise = np.abs(returns[1:][returns[:-1] >= 0]).mean()
        assert after_fall > after_rise
    # the first return is base x eps: the unscaled sd of the first moves is 0.1
    firsts = [
        (np.diff(np.concatenate([[100.0], s.values])) / 10.0)[0]
        for s in samples("volatility", "leverage", 400)
    ]
    assert np.std(firsts) == pytest.approx(0.1, rel=0.15)
