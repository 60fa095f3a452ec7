"""Univariate feature families (paper Appendix B.1): trend, seasonality, anomalies, structural
breaks, volatility and statistical properties. Each returns (values, sub_feature, labels,
qualitative, specifics)."""

from __future__ import annotations

import numpy as np

from tsrate.suites.understanding.generators.base import (
    ar1,
    count_peaks,
    pick,
)

# --------------------------------------------------------------------------------------
# Univariate (Appendix B.1). Each returns (values, sub_feature, labels, qualitative, specifics)
# --------------------------------------------------------------------------------------

TREND_KINDS = ("linear_up", "linear_down", "quadratic_up", "quadratic_down", "none")


def trend(rng: np.random.Generator, n: int, kind: str | None = None):
    """Linear ``a t + b`` (a in [0.1, 1] x direction, b in [100, 110]) or quadratic
    ``a t^2 + b t + c`` (a in [0.01, 0.05], b in [0, 1], both x direction), with N(0, 1)
    noise; ``none``: noise about b. The quadratic's ``c`` is drawn in [0, 10] and raised to
    ``10 - min(a t^2 + b t)`` so the series stays positive; the curve is 0 at t = 0, so the
    raise always wins and ``c`` is that bound (at least 10; the draw is kept for the draw
    order)."""
    kind = pick(rng, TREND_KINDS, kind)
    t = np.arange(n, dtype=float)
    noise = rng.normal(0.0, 1.0, n)
    labels: dict = {}
    if kind == "none":
        b = rng.uniform(100, 110)
        values = b + 2.0 * noise
        labels.update(direction="none", shape="none", intercept=b)
        return (
            values,
            kind,
            labels,
            "This time series shows no clear trend: it fluctuates around a stable level.",
            (f"It fluctuates around {b:.2f} with no clear upward or downward movement."),
        )
    shape, direction_word = kind.split("_")
    direction = 1.0 if direction_word == "up" else -1.0
    if shape == "linear":
        a = rng.uniform(0.1, 1.0) * direction
        b = rng.uniform(100, 110)
        values = a * t + b + noise
        labels.update(direction=direction_word, shape="linear", slope=a, intercept=b)
        specifics = f"It follows a linear trend with a slope of {a:.2f} per day."
    else:
        a = rng.uniform(0.01, 0.05) * direction
        b = rng.uniform(0.0, 1.0) * direction
        c = rng.uniform(0.0, 10.0)
        curve = a * t**2 + b * t
        c = max(c, 10.0 - curve.min())  # keep it positive
        values = curve + c + noise
        labels.update(direction=direction_word, shape="quadratic", a=a, b=b, c=c)
        specifics = f"It follows a quadratic trend with a curvature of {a:.3f}."
    word = "upward" if direction > 0 else "downward"
    if shape == "linear":
        qualitative = f"This time series exhibits a steady {word} linear trend."
    else:
        start = "lower" if direction > 0 else "higher"
        move = "rising" if direction > 0 else "falling"
        qualitative = (
            f"This time series exhibits an {word} quadratic trend, commencing with {start} "
            f"figures and {move} at an accelerating pace."
        )
    return values, kind, labels, qualitative, specifics


SEASONALITY_KINDS = ("fixed", "varying_amplitude", "shifting", "multiple", "none")
_PERIODS = {7: "weekly", 14: "biweekly", 30: "monthly"}


def seasonality(rng: np.random.Generator, n: int, kind: str | None = None):
    """Sinusoidal seasonality (period 7, 14 or 30 days, amplitude 5-20) about a level of
    50-100 with N(0, 1) noise: fixed; varying amplitude (x 0.3 -> 1.7 over the series);
    shifting (the period stretches by up to 50 %); multiple (weekly + monthly); none."""
    kind = pick(rng, SEASONALITY_KINDS, kind)
    t = np.arange(n, dtype=float)
    level = rng.uniform(50, 100)
    noise = rng.normal(0.0, 1.0, n)
    period = int(rng.choice(list(_PERIODS)))
    amplitude = rng.uniform(5, 20)
    phase = rng.uniform(0, 2 * np.pi)
    labels: dict = {"period": period, "amplitude": amplitude}
    if kind == "none":
        values = level + 2.0 * noise
        labels = {"period": None, "amplitude": 0.0}
        return (
            values,
            kind,
            labels,
            "This time series shows no seasonal pattern; it varies irregularly around a stable level.",
            (f"It varies irregularly around {level:.2f} without repeating cycles."),
        )
    if kind == "fixed":
        signal = amplitude * np.sin(2 * np.pi * t / period + phase)
        qualitative = f"This time series exhibits a regular {_PERIODS[period]} seasonal pattern with a constant amplitude."
    elif kind == "varying_amplitude":
        growth = rng.choice([1.0, -1.0])
        scale = 1.0 + growth * 0.7 * (2 * t / max(n - 1, 1) - 1)
        signal = amplitude * scale * np.sin(2 * np.pi * t / period + phase)
        labels["amplitude_trend"] = "increasing" if growth > 0 else "decreasing"
        word = "grows" if growth > 0 else "shrinks"
        qualitative = f"This time series exhibits a {_PERIODS[period]} seasonal pattern whose amplitude {word} over time."
    elif kind == "shifting":
        stretch = rng.uniform(0.3, 0.5)
        inst_period = period * (1 + stretch * t / max(n - 1, 1))
        signal = amplitude * np.sin(2 * np.pi * np.cumsum(1.0 / inst_period) + phase)
        labels["final_period"] = float(inst_period[-1])
        qualitative = "This time series exhibits a seasonal pattern whose peaks and troughs drift: the cycle gradually lengthens."
    else:  # multiple
        period, second = 7, 30
        amplitude2 = rng.uniform(5, 20)
        signal = amplitude * np.sin(2 * np.pi * t / period + phase) + amplitude2 * np.sin(
            2 * np.pi * t / second + rng.uniform(0, 2 * np.pi)
        )
        labels.update(period=period, second_period=second, second_amplitude=amplitude2)
        qualitative = "This time series exhibits multiple seasonal patterns: a weekly cycle on top of a monthly one."
    values = level + signal + noise
    peaks, troughs = count_peaks(signal)
    specifics = (
        f"It exhibits {kind.replace('_', ' ')} seasonality with a base period of {period} days, "
        f"with {peaks} peaks and {troughs} troughs, and an average amplitude of {amplitude:.2f}."
    )
    return values, kind, labels, qualitative, specifics


ANOMALY_KINDS = (
    "single_spike",
    "double_spike",
    "triple_spike",
    "step_spike",
    "level_shift",
    "temporal_disruption",
    "none",
)


def anomalies(rng: np.random.Generator, n: int, kind: str | None = None):
    """A level of 50-100 with N(0, 1) noise plus: a single spike of 8-15 noise sd, or a
    double / triple spike -- 2 / 3 spikes on CONSECUTIVE days, as Appendix B describes
    ("sequences of consecutive anomalies") -- not in the first or last 10 %; a step spike
    (4-10 elevated days that return: at least 4 so that it differs from a triple spike); a
    level shift (a persistent jump of 8-15 sd); a temporal disruption (8-20 days where the
    series freezes at one value); or none."""
    kind = pick(rng, ANOMALY_KINDS, kind)
    level = rng.uniform(50, 100)
    values = level + rng.normal(0.0, 1.0, n)
    lo, hi = max(1, int(0.1 * n)), min(n - 2, int(0.9 * n))
    labels: dict = {}
    sign = float(rng.choice([1.0, -1.0]))
    magnitude = rng.uniform(8, 15) * sign
    if kind == "none":
        return (
            values,
            kind,
            labels,
            "This time series has no anomalies: it fluctuates steadily around its level.",
            (f"It fluctuates around {level:.2f} with no outliers."),
        )
    if kind.endswith("_spike") and kind != "step_spike":
        count = {"single_spike": 1, "double_spike": 2, "triple_spike": 3}[kind]
        first = int(rng.integers(lo, max(lo + 1, hi - count + 1)))
        first = min(first, n - count)  # a 3-day series has room for 3 spikes only from day 0
        positions = list(range(first, first + count))
        for p in positions:
            values[p] += magnitude
        labels.update(positions=positions, magnitude=magnitude)
        word = {
            1: "a single sudden spike",
            2: "two sudden spikes on consecutive days",
            3: "three sudden spikes on consecutive days",
        }[count]
        qualitative = f"This time series is mostly stable but shows {word}."
        specifics = f"It has {count} spike(s) of about {magnitude:+.2f}."
        return values, kind, labels, qualitative, specifics
    # step spikes and disruptions end at least 3 days before the series does (they return)
    duration = int(rng.integers(4, 11)) if kind == "step_spike" else int(rng.integers(8, 21))
    last_start = n - 3 - duration if kind != "level_shift" else hi
    start = int(rng.integers(lo, max(lo + 1, min(hi, last_start))))
    if kind == "step_spike":
        end = min(n, start + duration)
        values[start:end] += magnitude
        labels.update(start=start, end=end, magnitude=magnitude)
        qualitative = "This time series jumps to a different level for a few days and then returns: a step spike."
        specifics = (
            f"It stays shifted by about {magnitude:+.2f} for {end - start} days before returning."
        )
    elif kind == "level_shift":
        values[start:] += magnitude
        labels.update(start=start, magnitude=magnitude)
        qualitative = (
            "This time series shows a level shift: from one day on it settles at a new level."
        )
        specifics = f"Its level shifts by about {magnitude:+.2f} and stays there."
    else:  # temporal_disruption
        end = min(n, start + duration)
        values[start:end] = values[start - 1]
        labels.update(start=start, end=end)
        qualitative = "This time series is interrupted: for a stretch of days it freezes at one value, then resumes."
        specifics = f"It is frozen for {end - start} days."
    return values, kind, labels, qualitative, specifics


BREAK_KINDS = (
    "mean_shift",
    "variance_shift",
    "mean_variance_shift",
    "seasonality_amplitude_shift",
    "autocorrelation_shift",
    "distribution_change",
    "stationarity_change",
    "linearity_change",
    "noise_trend_change",
    "frequency_change",
    "error_correlation_change",
    "variance_type_change",
    "none",
)
BREAK_CLASS = {
    "mean_shift": "parameter_shift",
    "variance_shift": "parameter_shift",
    "mean_variance_shift": "parameter_shift",
    "seasonality_amplitude_shift": "parameter_shift",
    "autocorrelation_shift": "parameter_shift",
    "distribution_change": "regime_shift",
    "stationarity_change": "regime_shift",
    "linearity_change": "regime_shift",
    "noise_trend_change": "regime_shift",
    "frequency_change": "regime_shift",
    "error_correlation_change": "regime_shift",
    "variance_type_change": "regime_shift",
    "none": "none",
}
#: variance_type_change: GARCH(1,1) errors after the break (unconditional variance 1)
BREAK_GARCH = {"omega": 0.05, "alpha": 0.3, "beta": 0.65}
#: linearity_change: threshold AR(1) after the break, x_t = phi x_{t-1} + e_t with phi
#: = 0.9 when x_{t-1} > 0 and -0.5 otherwise (linear AR(1), phi 0.5, before)
BREAK_THRESHOLD_AR = (0.9, -0.5)
#: error_correlation_change: MA(1) errors e_t + theta e_{t-1} after the break
BREAK_MA_THETA = 0.9


def structural_breaks(rng: np.random.Generator, n: int, kind: str | None = None):
    """One break at a random point in [30 %, 70 %] of the series. Parameter shifts: mean
    (+-5-8 sd), variance (sd x 4), seasonal amplitude (x 4), autocorrelation (AR phi 0 ->
    0.95). Regime shifts: distribution (normal -> exponential), stationarity (white noise ->
    random walk from the last pre-break value, steps N(0, 1.5^2)), noise -> trend, seasonal
    frequency (period 20 -> 5). The walk's step sd 1.5 is this generator's choice: the
    paper (Appendix B.1) names the change, stationary to non-stationary, but gives no
    numbers. With sd 1.5 the walk's spread after m steps, 1.5 sqrt(m), is at least 4.5
    times the unit sd of the noise before the break (m >= 9 at the default shortest series,
    30 points), so the break shows in the values, not only in a test statistic. Appendix
    B's other kinds: mean and variance together (+-5-8 and sd x 3, a parameter shift);
    linearity (linear AR(1) -> threshold AR(1), :data:`BREAK_THRESHOLD_AR`); error
    correlation (independent -> MA(1) errors, theta :data:`BREAK_MA_THETA`); variance type
    (constant variance -> GARCH(1,1) errors, :data:`BREAK_GARCH`, unconditional variance
    1). ``none``: AR(1) noise.
    The sub-feature is the class (parameter_shift, regime_shift, none); the kind is a label."""
    kind = pick(rng, BREAK_KINDS, kind)
    level = rng.uniform(50, 100)
    k = int(rng.integers(max(1, int(0.3 * n)), int(0.7 * n) + 1))  # never before day 1
    t = np.arange(n, dtype=float)
    e = rng.normal(0.0, 1.0, n)
    if kind == "none":
        x = ar1(rng, n, 0.3)
    elif kind == "mean_shift":
        x = e.copy()
        x[k:] += float(rng.choice([1.0, -1.0])) * rng.uniform(5, 8)
    elif kind == "variance_shift":
        x = e.copy()
        x[k:] *= 4.0
    elif kind == "mean_variance_shift":
        x = e.copy()
        x[k:] = 3.0 * x[k:] + float(rng.choice([1.0, -1.0])) * rng.uniform(5, 8)
    elif kind == "linearity_change":
        x = np.empty(n)
        x[0] = e[0]
        up, down = BREAK_THRESHOLD_AR
        for i in range(1, n):
            phi = 0.5 if i < k else (up if x[i - 1] > 0 else down)
            x[i] = phi * x[i - 1] + e[i]
    elif kind == "error_correlation_change":
        x = e.copy()
        x[k:] = e[k:] + BREAK_MA_THETA * e[k - 1 : n - 1]
    elif kind == "variance_type_change":
        x = e.copy()
        x[k:] = garch_returns(rng, n - k, **BREAK_GARCH)
    elif kind == "seasonality_amplitude_shift":
        amp = np.where(t < k, 2.0, 8.0)
        x = amp * np.sin(2 * np.pi * t / 10) + 0.5 * e
    elif kind == "autocorrelation_shift":
        x = np.concatenate([e[:k], ar1(rng, n - k, 0.95)])
    elif kind == "distribution_change":
        x = np.concatenate([e[:k], rng.exponential(3.0, n - k) - 3.0])
    elif kind == "stationarity_change":
        x = np.concatenate([e[:k], e[k - 1] + np.cumsum(rng.normal(0, 1.5, n - k))])
    elif kind == "noise_trend_change":
        slope = float(rng.choice([1.0, -1.0])) * rng.uniform(0.4, 1.0)
        x = e.copy()
        x[k:] += slope * (t[k:] - k)
    else:  # frequency_change
        period = np.where(t < k, 20.0, 5.0)
        x = 5 * np.sin(2 * np.pi * np.cumsum(1.0 / period)) + 0.5 * e
    values = level + x
    cls = BREAK_CLASS[kind]
    labels = {"kind": kind, "break_index": None if kind == "none" else k}
    if kind == "none":
        return (
            values,
            cls,
            labels,
            "This time series follows the same process throughout; there is no structural break.",
            ("Its behaviour does not change over the period."),
        )
    what = kind.replace("_", " ")
    if cls == "parameter_shift":
        qualitative = f"This time series shows a structural break: a parameter shift ({what}) partway through."
    else:
        qualitative = (
            f"This time series shows a structural break: a regime shift ({what}) partway through."
        )
    return values, cls, labels, qualitative, f"The break occurs after {k} days ({what})."


VOLATILITY_KINDS = ("clustered", "leverage", "constant", "increasing", "none")


def garch_returns(
    rng: np.random.Generator, n: int, omega: float = 0.1, alpha: float = 0.2, beta: float = 0.7
) -> np.ndarray:
    """GARCH(1,1): sigma_t^2 = omega + alpha r_{t-1}^2 + beta sigma_{t-1}^2, r_t = sigma_t eps_t
    (started at the unconditional variance omega / (1 - alpha - beta))."""
    eps = rng.normal(0.0, 1.0, n)
    r = np.empty(n)
    var = omega / (1 - alpha - beta)
    for i in range(n):
        r[i] = np.sqrt(var) * eps[i]
        var = omega + alpha * r[i] ** 2 + beta * var
    return r


def leverage_returns(
    rng: np.random.Generator, n: int, base: float = 0.1, strength: float = 0.3
) -> np.ndarray:
    """r_t = sigma_{t-1} eps_t; sigma rises by (1 + strength) after a negative return and
    falls to max(sigma (1 - strength), 0.01) after a non-negative one."""
    eps = rng.normal(0.0, 1.0, n)
    r = np.empty(n)
    sigma = base
    for i in range(n):
        r[i] = sigma * eps[i]
        sigma = sigma * (1 + strength) if r[i] < 0 else max(sigma * (1 - strength), 0.01)
    return r


def volatility(rng: np.random.Generator, n: int, kind: str | None = None):
    """Price paths 100 + cumsum(r) with clustered volatility (GARCH(1,1) with Appendix B's
    omega 0.1, alpha 0.2, beta 0.7, returns used as they are: scale 1, unconditional
    variance 1), leverage (base 0.1, strength 0.3; returns x 10, so that the moves are
    visible at two printed decimals -- the paper states no scale), constant
    (cumsum(eps) + eta), increasing (sigma_0 (1 + 5 t / n)) volatility, or none (the
    paper's "no volatility" set, Appendix B figure: a smooth path with no random
    day-to-day changes, 100 + a slow straight drift of at most 0.2 a day). Labels carry
    each kind's parameters and ``scale``."""
    kind = pick(rng, VOLATILITY_KINDS, kind)
    labels: dict = {}
    if kind == "none":
        slope = rng.uniform(-0.2, 0.2)
        values = 100 + slope * np.arange(n, dtype=float)
        labels.update(slope=slope)
        qualitative = "This time series shows no volatility: it moves smoothly, without random day-to-day changes."
        specifics = f"It changes by {slope:+.2f} every day."
        return values, kind, labels, qualitative, specifics
    if kind == "clustered":
        r = garch_returns(rng, n)
        labels.update(omega=0.1, alpha=0.2, beta=0.7, scale=1.0)
        values = 100 + np.cumsum(r)
        qualitative = "This time series shows clustered volatility: calm stretches alternate with bursts of large moves."
    elif kind == "leverage":
        r = 10.0 * leverage_returns(rng, n)
        labels.update(base=0.1, strength=0.3, scale=10.0)
        values = 100 + np.cumsum(r)
        qualitative = "This time series shows a leverage effect: volatility rises after falls and calms after rises."
    elif kind == "constant":
        values = 100 + np.cumsum(rng.normal(0, 1, n)) + rng.normal(0, 1, n)
        qualitative = "This time series moves with a constant volatility throughout."
    else:
        sigma0 = rng.uniform(0.5, 1.0)
        sigma = sigma0 * (1 + 5 * np.arange(n) / n)
        values = 100 + np.cumsum(rng.normal(0, 1, n) * sigma)
        labels.update(sigma0=sigma0, final_factor=6.0)
        qualitative = (
            "This time series becomes steadily more volatile: its swings grow larger over time."
        )
    diffs = np.diff(values)
    specifics = f"The standard deviation of its daily changes is {diffs.std(ddof=1):.2f}."
    return values, kind, labels, qualitative, specifics


STAT_KINDS = (
    "fat_tailed",
    "stationary",
    "changing_mean",
    "changing_variance",
    "seasonal",
    "trend_and_seasonality",
)


def statistical_properties(rng: np.random.Generator, n: int, kind: str | None = None):
    """Fat tails (Student-t, 3 degrees of freedom, stationary); stationary (Gaussian AR(1),
    phi in [0, 0.5]); non-stationary with a changing mean (trend), changing variance (sd
    x 1 -> 5), seasonality (period 12, amplitude 5) or trend and seasonality. Labels:
    ``fat_tails`` and ``stationary`` booleans."""
    kind = pick(rng, STAT_KINDS, kind)
    t = np.arange(n, dtype=float)
    level = rng.uniform(50, 100)
    if kind == "fat_tailed":
        x = rng.standard_t(3, n) * 2.0
    elif kind == "stationary":
        x = ar1(rng, n, rng.uniform(0.0, 0.5), 2.0)
    elif kind == "changing_mean":
        x = float(rng.choice([1.0, -1.0])) * rng.uniform(0.2, 0.5) * t + rng.normal(0, 2, n)
    elif kind == "changing_variance":
        x = rng.normal(0, 1, n) * (1 + 4 * t / n)
    elif kind == "seasonal":
        x = 5 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n)
    else:
        x = (
            float(rng.choice([1.0, -1.0])) * rng.uniform(0.2, 0.5) * t
            + 5 * np.sin(2 * np.pi * t / 12)
            + rng.normal(0, 1, n)
        )
    values = level + x
    fat = kind == "fat_tailed"
    stationary = kind in ("fat_tailed", "stationary")
    labels = {"fat_tails": fat, "stationary": stationary}
    qualitative = {
        "fat_tailed": "This time series is stationary but fat-tailed: extreme values occur far more often than under a normal distribution.",
        "stationary": "This time series is stationary: its mean, variance and autocorrelation stay the same over time.",
        "changing_mean": "This time series is non-stationary: its mean drifts steadily over time.",
        "changing_variance": "This time series is non-stationary: its variance grows over time.",
        "seasonal": "This time series is non-stationary because of a regular seasonal cycle.",
        "trend_and_seasonality": "This time series is non-stationary, combining a trend with a seasonal cycle.",
    }[kind]
    from scipy.stats import kurtosis

    specifics = f"Its excess kurtosis is {kurtosis(x):.2f}."
    return values, kind, labels, qualitative, specifics
