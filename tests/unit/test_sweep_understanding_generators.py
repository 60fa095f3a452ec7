"""Tests written for what the mutation sweep of the understanding suite's univariate generators
let through (tests/planted/sweep_understanding_generators.json).

Each generator is a fixed sequence of draws from one seeded ``numpy.random.Generator``; the
reference series below are written from each generator's documented definition (its
docstring and the paper's Appendix B), drawing in the same order from a generator with the
same seed, and built with different tools where there is one (``scipy.signal.lfilter`` for
the AR(1) and MA(1) recursions, ``numpy.polyval`` for the trends, moments for the kurtosis).
The product's own functions are never used to compute an expectation.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.signal import lfilter

from tsrate.suites.understanding.generators import univariate as uv

SEEDS = (0, 1, 2, 3, 5, 8, 13)
LENGTHS = (3, 4, 9, 30, 47, 150)  # 3 is the shortest length the suite allows


def cases():
    for seed in SEEDS:
        for n in LENGTHS:
            yield seed, n


def rng_of(seed):
    return np.random.default_rng(seed)


def numbers(text):
    return [float(x) for x in re.findall(r"[-+]?\d+(?:\.\d+)?", text)]


def ref_ar1(eps, phi):
    """AR(1) x_t = phi x_{t-1} + eps_t started in its stationary law: x_0 = eps_0 / sqrt(1 - phi^2)."""
    start = eps.copy()
    start[0] = eps[0] / np.sqrt(1 - phi**2)
    return lfilter([1.0], [1.0, -phi], start)


def ref_garch(eps, omega, alpha, beta):
    """r_t = sigma_t eps_t, sigma_t^2 = omega + alpha r_{t-1}^2 + beta sigma_{t-1}^2, sigma_0^2 the
    unconditional variance omega / (1 - alpha - beta)."""
    out = []
    var = omega / (1 - alpha - beta)
    for z in eps:
        r = np.sqrt(var) * z
        out.append(r)
        var = omega + alpha * r * r + beta * var
    return np.array(out)


def ref_peaks(x):
    """Strict interior local maxima and minima, by direct comparison with both neighbours."""
    mid, left, right = x[1:-1], x[:-2], x[2:]
    return int(((mid > left) & (mid > right)).sum()), int(((mid < left) & (mid < right)).sum())


def ref_excess_kurtosis(x):
    d = x - x.mean()
    return (d**4).mean() / (d**2).mean() ** 2 - 3.0


# ------------------------------------------------------------------------------ trend


def ref_trend(seed, n, kind):
    rng = rng_of(seed)
    t = np.arange(n, dtype=float)
    noise = rng.normal(0.0, 1.0, n)
    if kind == "none":
        b = rng.uniform(100, 110)
        return b + 2.0 * noise, {"direction": "none", "shape": "none", "intercept": b}
    shape, word = kind.split("_")
    sign = 1.0 if word == "up" else -1.0
    if shape == "linear":
        a = sign * rng.uniform(0.1, 1.0)
        b = rng.uniform(100, 110)
        return np.polyval([a, b], t) + noise, {"slope": a, "intercept": b}
    a = sign * rng.uniform(0.01, 0.05)
    b = sign * rng.uniform(0.0, 1.0)
    c0 = rng.uniform(0.0, 10.0)
    lowest = np.polyval([a, b, 0.0], t).min()
    c = c0 if c0 + lowest >= 10.0 else 10.0 - lowest  # lifted so the curve stays >= 10
    return np.polyval([a, b, c], t) + noise, {"a": a, "b": b, "c": c}


@pytest.mark.parametrize("kind", uv.TREND_KINDS)
def test_trend_series_and_labels_match_the_documented_definition(kind):
    for seed, n in cases():
        values, sub, labels, qual, spec = uv.trend(rng_of(seed), n, kind)
        want, want_labels = ref_trend(seed, n, kind)
        assert sub == kind
        np.testing.assert_allclose(values, want, rtol=1e-12, atol=1e-9)
        for key, value in want_labels.items():
            assert labels[key] == (value if isinstance(value, str) else pytest.approx(value))
        if kind == "none":
            continue
        direction, shape = kind.split("_")[1], kind.split("_")[0]
        assert labels["direction"] == direction and labels["shape"] == shape
        coef = want_labels["slope"] if shape == "linear" else want_labels["a"]
        digits = 2 if shape == "linear" else 3
        assert numbers(spec)[-1] == pytest.approx(round(coef, digits), abs=1e-12)
        assert ("upward" in qual) == (direction == "up")
        assert ("downward" in qual) == (direction == "down")
        if shape == "quadratic":
            assert ("lower" in qual and "rising" in qual) == (direction == "up")
            assert ("higher" in qual and "falling" in qual) == (direction == "down")


# ------------------------------------------------------------------------ seasonality


def ref_seasonality(seed, n, kind):
    rng = rng_of(seed)
    t = np.arange(n, dtype=float)
    level = rng.uniform(50, 100)
    noise = rng.normal(0.0, 1.0, n)
    period = int(rng.choice([7, 14, 30]))
    amp = rng.uniform(5, 20)
    phase = rng.uniform(0, 2 * np.pi)
    labels = {"period": period, "amplitude": amp}
    if kind == "none":
        return level + 2.0 * noise, {"period": None, "amplitude": 0.0}, None
    if kind == "fixed":
        sig = amp * np.sin(2 * np.pi * t / period + phase)
    elif kind == "varying_amplitude":
        grow = rng.choice([1.0, -1.0])
        # amplitude factor runs linearly from 1 - 0.7 to 1 + 0.7 (or back) over the series
        factor = np.linspace(1 - 0.7 * grow, 1 + 0.7 * grow, n)
        sig = amp * factor * np.sin(2 * np.pi * t / period + phase)
        labels["amplitude_trend"] = "increasing" if grow > 0 else "decreasing"
    elif kind == "shifting":
        stretch = rng.uniform(0.3, 0.5)
        inst = period * np.linspace(1.0, 1.0 + stretch, n)
        cycles = np.add.accumulate(1.0 / inst)
        sig = amp * np.sin(2 * np.pi * cycles + phase)
        labels["final_period"] = period * (1 + stretch)
    else:
        amp2 = rng.uniform(5, 20)
        phase2 = rng.uniform(0, 2 * np.pi)
        sig = amp * np.sin(2 * np.pi * t / 7 + phase) + amp2 * np.sin(2 * np.pi * t / 30 + phase2)
        period = 7
        labels.update(period=7, second_period=30, second_amplitude=amp2)
    return level + sig + noise, labels, (ref_peaks(sig), period, amp)


@pytest.mark.parametrize("kind", uv.SEASONALITY_KINDS)
def test_seasonality_series_labels_and_peak_counts_match_the_definition(kind):
    for seed, n in cases():
        values, sub, labels, qual, spec = uv.seasonality(rng_of(seed), n, kind)
        want, want_labels, extra = ref_seasonality(seed, n, kind)
        assert sub == kind
        np.testing.assert_allclose(values, want, rtol=1e-12, atol=1e-9)
        assert labels.keys() == want_labels.keys()
        for key, value in want_labels.items():
            assert labels[key] == (pytest.approx(value) if isinstance(value, float) else value)
        if extra is None:
            continue
        (peaks, troughs), period, amp = extra
        assert numbers(spec) == pytest.approx([period, peaks, troughs, round(amp, 2)])
        if kind == "varying_amplitude":
            grows = labels["amplitude_trend"] == "increasing"
            assert ("grows" in qual) == grows and ("shrinks" in qual) == (not grows)


# -------------------------------------------------------------------------- anomalies


def ref_anomalies(seed, n, kind):
    rng = rng_of(seed)
    level = rng.uniform(50, 100)
    x = level + rng.normal(0.0, 1.0, n)
    lo = max(1, n // 10)  # not in the first 10 % (and never day 0)
    hi = min(n - 2, (9 * n) // 10)  # nor in the last 10 % (and never the last two days)
    sign = float(rng.choice([1.0, -1.0]))
    mag = sign * rng.uniform(8, 15)
    if kind == "none":
        return x, {}
    spikes = {"single_spike": 1, "double_spike": 2, "triple_spike": 3}
    if kind in spikes:
        count = spikes[kind]
        top = hi - count + 1 if hi - count + 1 > lo else lo + 1
        first = int(rng.integers(lo, top))
        first = first if first + count <= n else n - count  # the spikes must fit in the series
        pos = [first + j for j in range(count)]
        x[pos] = x[pos] + mag
        return x, {"positions": pos, "magnitude": mag}
    if kind == "step_spike":
        dur = int(rng.integers(4, 11))
    else:
        dur = int(rng.integers(8, 21))
    latest = hi if kind == "level_shift" else min(hi, n - 3 - dur)
    start = int(rng.integers(lo, latest if latest > lo else lo + 1))
    if kind == "level_shift":
        x[start:] = x[start:] + mag
        return x, {"start": start, "magnitude": mag}
    end = start + dur if start + dur < n else n
    if kind == "step_spike":
        x[start:end] = x[start:end] + mag
        return x, {"start": start, "end": end, "magnitude": mag}
    x[start:end] = x[start - 1]
    return x, {"start": start, "end": end}


@pytest.mark.parametrize("kind", uv.ANOMALY_KINDS)
def test_anomaly_series_and_labels_match_the_definition(kind):
    for seed, n in cases():
        values, sub, labels, qual, spec = uv.anomalies(rng_of(seed), n, kind)
        want, want_labels = ref_anomalies(seed, n, kind)
        assert sub == kind
        np.testing.assert_allclose(values, want, rtol=1e-12, atol=1e-9)
        assert labels.keys() == want_labels.keys()
        for key, value in want_labels.items():
            assert labels[key] == (pytest.approx(value) if isinstance(value, float) else value)
        if "end" in want_labels:
            assert numbers(spec)[-1] == want_labels["end"] - want_labels["start"]
            assert want_labels["end"] <= n - 3 or n < 30  # it returns before the series ends
        if "magnitude" in want_labels:
            assert f"{want_labels['magnitude']:+.2f}" in spec


def test_spikes_sit_inside_the_middle_eighty_percent():
    # n = 100: the first day allowed is 10, and the last spike day is at most min(98, 90) - 1
    for seed in range(60):
        for kind, count in (("single_spike", 1), ("triple_spike", 3)):
            pos = uv.anomalies(rng_of(seed), 100, kind)[2]["positions"]
            assert pos[0] >= 10 and pos[-1] <= 89 and len(pos) == count


# ------------------------------------------------------------------ structural breaks


def ref_breaks(seed, n, kind):
    rng = rng_of(seed)
    level = rng.uniform(50, 100)
    k = int(rng.integers(max((3 * n) // 10, 1), (7 * n) // 10 + 1))  # a day before the break
    t = np.arange(n, dtype=float)
    e = rng.normal(0.0, 1.0, n)
    before, after = e[:k], e[k:]
    if kind == "none":
        x = ref_ar1(rng.normal(0.0, 1.0, n), 0.3)
    elif kind == "mean_shift":
        shift = float(rng.choice([1.0, -1.0])) * rng.uniform(5, 8)
        x = np.concatenate([before, after + shift])
    elif kind == "variance_shift":
        x = np.concatenate([before, 4.0 * after])
    elif kind == "mean_variance_shift":
        shift = float(rng.choice([1.0, -1.0])) * rng.uniform(5, 8)
        x = np.concatenate([before, 3.0 * after + shift])
    elif kind == "linearity_change":
        x = np.zeros(n)
        x[0] = e[0]
        for i in range(1, n):
            if i < k:
                phi = 0.5
            else:
                phi = 0.9 if x[i - 1] > 0 else -0.5
            x[i] = phi * x[i - 1] + e[i]
    elif kind == "error_correlation_change":
        ma = lfilter([1.0, 0.9], [1.0], e)  # e_t + 0.9 e_{t-1}
        x = np.concatenate([before, ma[k:]])
    elif kind == "variance_type_change":
        x = np.concatenate([before, ref_garch(rng.normal(0.0, 1.0, n - k), 0.05, 0.3, 0.65)])
    elif kind == "seasonality_amplitude_shift":
        amp = np.concatenate([np.full(k, 2.0), np.full(n - k, 8.0)])
        x = amp * np.sin(2 * np.pi * t / 10) + 0.5 * e
    elif kind == "autocorrelation_shift":
        x = np.concatenate([before, ref_ar1(rng.normal(0.0, 1.0, n - k), 0.95)])
    elif kind == "distribution_change":
        x = np.concatenate([before, rng.exponential(3.0, n - k) - 3.0])
    elif kind == "stationarity_change":
        steps = rng.normal(0.0, 1.5, n - k)
        x = np.concatenate([before, e[k - 1] + np.add.accumulate(steps)])
    elif kind == "noise_trend_change":
        slope = float(rng.choice([1.0, -1.0])) * rng.uniform(0.4, 1.0)
        ramp = np.concatenate([np.zeros(k), slope * np.arange(n - k)])
        x = e + ramp
    else:  # frequency_change: period 20 before the break, 5 after, phase accumulated
        freq = np.concatenate([np.full(k, 1 / 20), np.full(n - k, 1 / 5)])
        x = 5 * np.sin(2 * np.pi * np.add.accumulate(freq)) + 0.5 * e
    return level + x, k


PARAMETER_SHIFTS = {
    "mean_shift",
    "variance_shift",
    "mean_variance_shift",
    "seasonality_amplitude_shift",
    "autocorrelation_shift",
}


@pytest.mark.parametrize("kind", uv.BREAK_KINDS)
def test_break_series_and_break_index_match_the_definition(kind):
    for seed, n in cases():
        values, cls, labels, qual, spec = uv.structural_breaks(rng_of(seed), n, kind)
        want, k = ref_breaks(seed, n, kind)
        np.testing.assert_allclose(values, want, rtol=1e-12, atol=1e-9)
        assert 0.3 * n - 1 < k <= 0.7 * n and k >= 1
        if kind == "none":
            assert cls == "none" and labels == {"kind": "none", "break_index": None}
            continue
        want_cls = "parameter_shift" if kind in PARAMETER_SHIFTS else "regime_shift"
        assert cls == want_cls and labels == {"kind": kind, "break_index": k}
        assert numbers(spec) == [k]
        assert ("parameter shift" in qual) == (want_cls == "parameter_shift")
        assert ("regime shift" in qual) == (want_cls == "regime_shift")


# ------------------------------------------------------------------------- volatility


def test_garch_returns_follow_the_recursion_for_other_parameters():
    for seed in SEEDS:
        got = uv.garch_returns(rng_of(seed), 80, omega=0.2, alpha=0.1, beta=0.5)
        want = ref_garch(rng_of(seed).normal(0.0, 1.0, 80), 0.2, 0.1, 0.5)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    # the defaults are Appendix B's omega 0.1, alpha 0.2, beta 0.7
    got = uv.garch_returns(rng_of(4), 60)
    np.testing.assert_allclose(got, ref_garch(rng_of(4).normal(0.0, 1.0, 60), 0.1, 0.2, 0.7))


def ref_leverage(eps, base, strength):
    out, sigma = [], base
    for z in eps:
        r = sigma * z
        out.append(r)
        if r < 0:
            sigma = sigma + strength * sigma
        else:
            sigma = sigma - strength * sigma if sigma - strength * sigma > 0.01 else 0.01
    return np.array(out)


def test_leverage_returns_follow_the_recursion_with_the_defaults():
    for seed in SEEDS:
        got = uv.leverage_returns(rng_of(seed), 200)
        want = ref_leverage(rng_of(seed).normal(0.0, 1.0, 200), 0.1, 0.3)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def ref_volatility(seed, n, kind):
    rng = rng_of(seed)
    t = np.arange(n, dtype=float)
    if kind == "none":
        slope = rng.uniform(-0.2, 0.2)
        return 100 + slope * t, {"slope": slope}
    if kind == "clustered":
        r = ref_garch(rng.normal(0.0, 1.0, n), 0.1, 0.2, 0.7)
        labels = {"omega": 0.1, "alpha": 0.2, "beta": 0.7, "scale": 1.0}
    elif kind == "leverage":
        r = 10.0 * ref_leverage(rng.normal(0.0, 1.0, n), 0.1, 0.3)
        labels = {"base": 0.1, "strength": 0.3, "scale": 10.0}
    elif kind == "constant":
        walk = np.add.accumulate(rng.normal(0, 1, n))
        return 100 + walk + rng.normal(0, 1, n), {}
    else:
        sigma0 = rng.uniform(0.5, 1.0)
        sd = sigma0 * (1 + 5 * t / n)  # from sigma0 to nearly 6 sigma0
        r = rng.normal(0, 1, n) * sd
        labels = {"sigma0": sigma0, "final_factor": 6.0}
    return 100 + np.add.accumulate(r), labels


@pytest.mark.parametrize("kind", uv.VOLATILITY_KINDS)
def test_volatility_paths_labels_and_change_sd_match_the_definition(kind):
    for seed, n in cases():
        values, sub, labels, qual, spec = uv.volatility(rng_of(seed), n, kind)
        want, want_labels = ref_volatility(seed, n, kind)
        assert sub == kind
        np.testing.assert_allclose(values, want, rtol=1e-12, atol=1e-9)
        assert labels == pytest.approx(want_labels)
        d = np.diff(want)
        if kind == "none":
            assert numbers(spec) == pytest.approx([round(want_labels["slope"], 2)], abs=1e-12)
        else:
            sd = np.sqrt(((d - d.mean()) ** 2).sum() / (len(d) - 1))
            assert numbers(spec) == pytest.approx([round(sd, 2)])


# ------------------------------------------------------------ statistical properties


def ref_stats(seed, n, kind):
    rng = rng_of(seed)
    t = np.arange(n, dtype=float)
    level = rng.uniform(50, 100)
    season = 5 * np.sin(2 * np.pi * t / 12)
    if kind == "fat_tailed":
        x = 2.0 * rng.standard_t(3, n)
    elif kind == "stationary":
        phi = rng.uniform(0.0, 0.5)
        eps = rng.normal(0.0, 2.0, n)
        x = ref_ar1(eps, phi)
    elif kind in ("changing_mean", "trend_and_seasonality"):
        sign = float(rng.choice([1.0, -1.0]))
        slope = sign * rng.uniform(0.2, 0.5)
        if kind == "changing_mean":
            x = slope * t + rng.normal(0, 2, n)
        else:
            x = slope * t + season + rng.normal(0, 1, n)
    elif kind == "changing_variance":
        x = rng.normal(0, 1, n) * np.linspace(1.0, 5.0 - 4.0 / n, n)  # sd 1 -> 5 (1 + 4 t / n)
    else:
        x = season + rng.normal(0, 1, n)
    return level + x, x


@pytest.mark.parametrize("kind", uv.STAT_KINDS)
def test_statistical_property_series_labels_and_kurtosis_match_the_definition(kind):
    for seed, n in cases():
        values, sub, labels, qual, spec = uv.statistical_properties(rng_of(seed), n, kind)
        want, x = ref_stats(seed, n, kind)
        assert sub == kind
        np.testing.assert_allclose(values, want, rtol=1e-12, atol=1e-9)
        assert labels == {
            "fat_tails": kind == "fat_tailed",
            "stationary": kind in ("fat_tailed", "stationary"),
        }
        assert numbers(spec) == pytest.approx([round(ref_excess_kurtosis(x), 2)], abs=1e-9)


def test_the_shortest_series_the_suite_allows_are_generated_without_error():
    # 3 days is the shortest length generate_sample accepts: a triple spike then covers days
    # 0-2 (it used to index day 3), and the break comes after day 1 or 2, never at day 0 (an
    # MA(1) break at day 0 used to fail on the missing day -1)
    for seed in range(40):
        assert uv.anomalies(rng_of(seed), 3, "triple_spike")[2]["positions"] == [0, 1, 2]
        for kind in uv.BREAK_KINDS:
            values, _, labels, _, _ = uv.structural_breaks(rng_of(seed), 3, kind)
            assert values.shape == (3,) and np.isfinite(values).all()
            assert labels["break_index"] in (None, 1, 2)


def test_series_key_is_the_first_16_hex_digits_of_the_versioned_coordinates_hash():
    import hashlib

    from tsrate.suites.understanding import generators as g

    s = g.generate_sample("trend", "test", 3, 11)
    # generator version 1: bumping it is a deliberate change of every stored key
    text = f"v1|trend|test|3|{s.seed}"
    assert s.series_key == hashlib.sha256(text.encode()).hexdigest()[:16]


def test_sample_start_date_length_and_quantitative_text_follow_the_conventions():
    import datetime as dt
    import hashlib

    from tsrate import TsrateError
    from tsrate.suites.understanding import generators as g

    for index in range(6):
        s = g.generate_sample("seasonality", "test", index, 11)
        digest = hashlib.sha256(f"11|seasonality|test|{index}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        # start: 2000-01-01 plus 0 .. 24 * 365 - 1 days; length uniform in [30, 150]
        start = dt.date(2000, 1, 1) + dt.timedelta(days=int(rng.integers(0, 8760)))
        n = int(rng.integers(30, 151))
        assert (s.start_date, s.length) == (start, n)
        lo, hi = int(np.argmin(s.values)), int(np.argmax(s.values))
        end = start + dt.timedelta(days=n - 1)
        assert f"period from {start} to {end} ({n} days)." in s.quantitative
        assert (
            f"Its minimum is {s.values[lo]:.2f} on {start + dt.timedelta(days=lo)} and its "
            f"maximum is {s.values[hi]:.2f} on {start + dt.timedelta(days=hi)}."
        ) in s.quantitative
    assert g.generate_sample("brownian", "test", 0, 11).length == 175
    assert g.generate_sample("trend", "test", 0, 11, min_length=3, max_length=3).length == 3
    with pytest.raises(TsrateError):
        g.generate_sample("trend", "test", 0, 11, min_length=2, max_length=3)
