"""Seeded generators of the paper's synthetic datasets (Appendix B) and position-bias sets
(Appendix C).

Every series carries exactly one feature of the taxonomy (paper Table 1), its labels
(``sub_feature`` plus the generator's parameters), a qualitative description (the shape, in
words) and a quantitative one (date range, minimum and maximum with their dates, and the
feature's specifics), as in Section 3.2.

Conventions (ours where the paper is silent):

* daily index from a random start date in 2000-2024; lengths uniform in [30, 150]
  (position sets: a fixed length, 175 in the paper);
* one generator call = one ``numpy.random.Generator`` seeded from
  ``(data_seed, dataset, split, index)`` (:func:`sample_seed`), so any one series can be
  regenerated alone and splits never share draws;
* a ``none`` control class in trend, seasonality, anomalies and structural breaks (the
  paper's "no clear trend" / "no outlier" / "no break") gives the yes/no detection task its
  negatives; volatility's negative is ``constant``, dynamic conditional correlation's a
  ``constant`` correlation;
* quadratic trends multiply both ``a`` and ``b`` by the direction, so a downward quadratic
  falls over the whole series (the paper's ``b`` in [0, 1] for both directions can turn a
  short "downward" series upward);
* volatility series are price paths ``100 + cumsum(r)`` of the paper's returns ``r``
  (GARCH(1,1) omega 0.1, alpha 0.2, beta 0.7; leverage base 0.1 strength 0.3; constant
  ``cumsum(eps) + eta``; increasing ``sigma_0 (1 + 5 t / n)``); the returns are the
  differences of what the prompt shows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable

import numpy as np

from tsrate import TsrateError

GENERATOR_VERSION = 1

UNIVARIATE = (
    "trend",
    "seasonality",
    "anomalies",
    "structural_breaks",
    "volatility",
    "statistical_properties",
)
MULTIVARIATE = ("correlation", "cross_correlation", "dynamic_correlation")
POSITION = ("brownian", "outlier", "monotone", "monotone_noise", "sinusoidal")
SPLITS = ("train", "validation", "test")


@dataclasses.dataclass(frozen=True)
class Sample:
    """One generated series (one column, or two for the multivariate datasets)."""

    dataset: str
    split: str
    index: int
    seed: int
    start_date: dt.date
    values: np.ndarray  # (n,) or (n, 2)
    sub_feature: str
    labels: dict
    qualitative: str
    quantitative: str

    @property
    def group(self) -> str:
        if self.dataset in MULTIVARIATE:
            return "multivariate"
        return "position" if self.dataset in POSITION else "univariate"

    @property
    def length(self) -> int:
        return int(self.values.shape[0])

    @property
    def dates(self) -> list[dt.date]:
        return [self.start_date + dt.timedelta(days=i) for i in range(self.length)]

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """Column name -> values, as the formats print them (``Value`` or Series1/Series2)."""
        if self.values.ndim == 1:
            return {"Value": self.values}
        return {f"Series{i + 1}": self.values[:, i] for i in range(self.values.shape[1])}

    @property
    def series_key(self) -> str:
        text = f"v{GENERATOR_VERSION}|{self.dataset}|{self.split}|{self.index}|{self.seed}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def sample_seed(data_seed: int, dataset: str, split: str, index: int) -> int:
    """The seed of one series: independent of every other series (hash of its coordinates)."""
    text = f"{data_seed}|{dataset}|{split}|{index}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def _pick(rng: np.random.Generator, kinds: tuple[str, ...], kind: str | None) -> str:
    if kind is None:
        return str(rng.choice(kinds))
    if kind not in kinds:
        raise TsrateError(f"unknown kind {kind!r}: choose from {', '.join(kinds)}")
    return kind


def _ar1(rng: np.random.Generator, n: int, phi: float, scale: float = 1.0) -> np.ndarray:
    eps = rng.normal(0.0, scale, n)
    out = np.empty(n)
    out[0] = eps[0] / np.sqrt(max(1e-9, 1 - phi**2))
    for t in range(1, n):
        out[t] = phi * out[t - 1] + eps[t]
    return out


def _peaks(x: np.ndarray) -> tuple[int, int]:
    """Local maxima and minima of a smooth curve (strict, interior)."""
    d = np.sign(np.diff(x))
    change = np.diff(d)
    return int((change < 0).sum()), int((change > 0).sum())


# --------------------------------------------------------------------------------------
# Univariate (Appendix B.1). Each returns (values, sub_feature, labels, qualitative, specifics)
# --------------------------------------------------------------------------------------

TREND_KINDS = ("linear_up", "linear_down", "quadratic_up", "quadratic_down", "none")


def trend(rng: np.random.Generator, n: int, kind: str | None = None):
    """Linear ``a t + b`` (a in [0.1, 1] x direction, b in [100, 110]) or quadratic
    ``a t^2 + b t + c`` (a in [0.01, 0.05], b in [0, 1], both x direction; c in [0, 10],
    raised so the series stays positive), with N(0, 1) noise; ``none``: noise about b."""
    kind = _pick(rng, TREND_KINDS, kind)
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
    kind = _pick(rng, SEASONALITY_KINDS, kind)
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
    peaks, troughs = _peaks(signal)
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
    kind = _pick(rng, ANOMALY_KINDS, kind)
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
    (+-5 sd), variance (sd x 4), seasonal amplitude (x 4), autocorrelation (AR phi 0 ->
    0.95). Regime shifts: distribution (normal -> exponential), stationarity (white noise ->
    random walk), noise -> trend, seasonal frequency (period 20 -> 5). Appendix B's other
    kinds: mean and variance together (+-5-8 and sd x 3, a parameter shift); linearity
    (linear AR(1) -> threshold AR(1), :data:`BREAK_THRESHOLD_AR`); error correlation
    (independent -> MA(1) errors, theta :data:`BREAK_MA_THETA`); variance type (constant
    variance -> GARCH(1,1) errors, :data:`BREAK_GARCH`, unconditional variance 1).
    ``none``: AR(1) noise.
    The sub-feature is the class (parameter_shift, regime_shift, none); the kind is a label."""
    kind = _pick(rng, BREAK_KINDS, kind)
    level = rng.uniform(50, 100)
    k = int(rng.integers(int(0.3 * n), int(0.7 * n) + 1))
    t = np.arange(n, dtype=float)
    e = rng.normal(0.0, 1.0, n)
    if kind == "none":
        x = _ar1(rng, n, 0.3)
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
        x = np.concatenate([e[:k], _ar1(rng, n - k, 0.95)])
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
    kind = _pick(rng, VOLATILITY_KINDS, kind)
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
    kind = _pick(rng, STAT_KINDS, kind)
    t = np.arange(n, dtype=float)
    level = rng.uniform(50, 100)
    if kind == "fat_tailed":
        x = rng.standard_t(3, n) * 2.0
    elif kind == "stationary":
        x = _ar1(rng, n, rng.uniform(0.0, 0.5), 2.0)
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


# --------------------------------------------------------------------------------------
# Multivariate (Appendix B.2): two series
# --------------------------------------------------------------------------------------

CORRELATION_KINDS = ("positive", "negative", "none")


def _pair(rng: np.random.Generator, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    levels = rng.uniform(50, 100, 2)
    scales = rng.uniform(2, 6, 2)
    return np.column_stack([levels[0] + scales[0] * a, levels[1] + scales[1] * b])


def correlation(rng: np.random.Generator, n: int, kind: str | None = None):
    """Two stationary Gaussian series with correlation rho: +-[0.6, 0.95] or 0."""
    kind = _pick(rng, CORRELATION_KINDS, kind)
    rho = {"positive": 1.0, "negative": -1.0, "none": 0.0}[kind] * rng.uniform(0.6, 0.95)
    z = rng.normal(0, 1, (n, 2))
    a = z[:, 0]
    b = rho * z[:, 0] + np.sqrt(1 - rho**2) * z[:, 1]
    values = _pair(rng, a, b)
    sample_rho = float(np.corrcoef(values[:, 0], values[:, 1])[0, 1])
    labels = {"rho": rho, "sample_rho": sample_rho}
    word = {
        "positive": "move together (positive correlation)",
        "negative": "move in opposite directions (negative correlation)",
        "none": "move independently (no correlation)",
    }[kind]
    return (
        values,
        kind,
        labels,
        f"These two time series {word}.",
        (f"Their sample correlation coefficient is {sample_rho:.2f}."),
    )


CROSS_KINDS = ("positive_direct", "positive_lagged", "negative_direct", "negative_lagged")


def cross_correlation(rng: np.random.Generator, n: int, kind: str | None = None):
    """Series2 = sign x Series1 shifted by ``lag`` days (0 direct, 2-6 lagged) + noise;
    Series1 is AR(1) with phi 0.3 (so the lag is identifiable)."""
    kind = _pick(rng, CROSS_KINDS, kind)
    sign = 1.0 if kind.startswith("positive") else -1.0
    lag = 0 if kind.endswith("direct") else int(rng.integers(2, 7))
    x = _ar1(rng, n + lag, 0.3)
    lead = x[lag:]
    follower = sign * x[:n] + 0.3 * rng.normal(0, 1, n)
    values = _pair(rng, lead, follower)
    labels = {"sign": "positive" if sign > 0 else "negative", "lag": lag}
    how = "positively" if sign > 0 else "negatively"
    if lag:
        qualitative = f"These two time series are {how} related with a delay: Series2 follows Series1 after a few days."
        specifics = (
            f"Series2 repeats Series1's moves {lag} days later ({labels['sign']} relationship)."
        )
    else:
        qualitative = f"These two time series are {how} related at the same time, without delay."
        specifics = f"They move {how} together on the same days."
    return values, kind, labels, qualitative, specifics


DCC_KINDS = ("correlated_first_half", "correlated_second_half", "constant")


def dynamic_correlation(rng: np.random.Generator, n: int, kind: str | None = None):
    """Correlation rho (+-[0.8, 0.95]) in one half and 0 in the other, switching at a random
    point in [40 %, 60 %]; ``constant``: rho throughout."""
    kind = _pick(rng, DCC_KINDS, kind)
    rho = float(rng.choice([1.0, -1.0])) * rng.uniform(0.8, 0.95)
    k = int(rng.integers(int(0.4 * n), int(0.6 * n) + 1))
    t = np.arange(n)
    if kind == "correlated_first_half":
        rho_t = np.where(t < k, rho, 0.0)
    elif kind == "correlated_second_half":
        rho_t = np.where(t < k, 0.0, rho)
    else:
        rho_t = np.full(n, rho)
    z = rng.normal(0, 1, (n, 2))
    b = rho_t * z[:, 0] + np.sqrt(1 - rho_t**2) * z[:, 1]
    values = _pair(rng, z[:, 0], b)
    labels = {"rho": rho, "switch_index": None if kind == "constant" else k}
    sign = "positively" if rho > 0 else "negatively"
    qualitative = {
        "correlated_first_half": f"These two time series are {sign} correlated in the first half only; later they move independently.",
        "correlated_second_half": f"These two time series move independently at first and become {sign} correlated in the second half.",
        "constant": f"These two time series stay {sign} correlated over the whole period.",
    }[kind]
    specifics = f"The correlation is about {rho:.2f} where present" + (
        "." if kind == "constant" else f", switching after {k} days."
    )
    return values, kind, labels, qualitative, specifics


# --------------------------------------------------------------------------------------
# Position bias (Appendix C): the extreme (and the queried date) placed by quadrant
# --------------------------------------------------------------------------------------


def quadrant_of(index: int, n: int) -> int:
    """1..4: which quarter of a length-``n`` series position ``index`` falls in."""
    return min(4, int(4 * index / n) + 1)


def _quadrant_index(rng: np.random.Generator, n: int, quadrant: int) -> int:
    lo, hi = (quadrant - 1) * n // 4, quadrant * n // 4
    while True:
        i = int(rng.integers(lo, hi))
        if quadrant_of(i, n) == quadrant:
            return i


def position_series(
    rng: np.random.Generator, kind: str, n: int, extreme: str, quadrant: int
) -> tuple[np.ndarray, dict, str]:
    """A position-bias series: ``brownian`` (rejection-sampled until its ``extreme`` falls in
    ``quadrant``), ``outlier`` (one spike that is the extreme, placed in ``quadrant``),
    ``monotone`` (strictly increasing/decreasing) or ``monotone_noise`` (a noisy monotone
    drift); for monotone sets the direction puts the extreme at one end (quadrant 1 or 4).
    ``sinusoidal`` (Appendix E.1's sinusoidal set: 100 + A sin(2 pi t / P + phase) + N(0,
    0.5) noise, amplitude A in [5, 15], period P in [n / 6, n / 2], phase rejection-sampled
    until the ``extreme`` falls in ``quadrant``).
    The queried date for retrieval (and the searched value) lies in ``quadrant`` for every
    kind."""
    if extreme not in ("max", "min") or quadrant not in (1, 2, 3, 4):
        raise TsrateError(f"position series: bad extreme {extreme!r} or quadrant {quadrant!r}")
    pick = np.argmax if extreme == "max" else np.argmin
    if kind == "brownian":
        for _ in range(10_000):
            x = 100 + np.cumsum(rng.normal(0, 1, n))
            if quadrant_of(int(pick(x)), n) == quadrant:
                break
        else:  # pragma: no cover - astronomically unlikely
            raise TsrateError("could not place the brownian extreme by rejection sampling")
        qualitative = "This time series wanders randomly like a Brownian motion."
    elif kind == "outlier":
        x = 100 + rng.normal(0, 1, n)
        i = _quadrant_index(rng, n, quadrant)
        x[i] += (1 if extreme == "max" else -1) * rng.uniform(10, 20)
        qualitative = "This time series is stable apart from one outlier."
    elif kind == "sinusoidal":
        t = np.arange(n, dtype=float)
        amplitude, period = rng.uniform(5, 15), rng.uniform(n / 6, n / 2)
        for _ in range(10_000):
            x = 100 + amplitude * np.sin(2 * np.pi * t / period + rng.uniform(0, 2 * np.pi))
            x = x + rng.normal(0, 0.5, n)
            if quadrant_of(int(pick(x)), n) == quadrant:
                break
        else:  # pragma: no cover - astronomically unlikely
            raise TsrateError("could not place the sinusoidal extreme by rejection sampling")
        qualitative = "This time series oscillates regularly like a sine wave."
    elif kind in ("monotone", "monotone_noise"):
        increasing = (extreme == "max") == (quadrant >= 3)
        steps = rng.uniform(0.2, 1.0, n)
        if kind == "monotone_noise":
            steps = steps + rng.normal(0, 1.0, n)
        x = 100 + (1 if increasing else -1) * np.cumsum(steps)
        qualitative = f"This time series {'rises' if increasing else 'falls'} {'steadily' if kind == 'monotone' else 'with noise'}."
    else:
        raise TsrateError(f"unknown position dataset {kind!r}: choose from {', '.join(POSITION)}")
    labels = {
        "extreme": extreme,
        "extreme_index": int(pick(x)),
        "extreme_quadrant": quadrant_of(int(pick(x)), n),
        "query_index": _quadrant_index(rng, n, quadrant),
        "query_quadrant": quadrant,
    }
    return x, labels, qualitative


# --------------------------------------------------------------------------------------
# Registry and sampling
# --------------------------------------------------------------------------------------

GENERATORS: dict[str, Callable] = {
    "trend": trend,
    "seasonality": seasonality,
    "anomalies": anomalies,
    "structural_breaks": structural_breaks,
    "volatility": volatility,
    "statistical_properties": statistical_properties,
    "correlation": correlation,
    "cross_correlation": cross_correlation,
    "dynamic_correlation": dynamic_correlation,
}
KINDS: dict[str, tuple[str, ...]] = {
    "trend": TREND_KINDS,
    "seasonality": SEASONALITY_KINDS,
    "anomalies": ANOMALY_KINDS,
    "structural_breaks": BREAK_KINDS,
    "volatility": VOLATILITY_KINDS,
    "statistical_properties": STAT_KINDS,
    "correlation": CORRELATION_KINDS,
    "cross_correlation": CROSS_KINDS,
    "dynamic_correlation": DCC_KINDS,
}


def _start_date(rng: np.random.Generator) -> dt.date:
    return dt.date(2000, 1, 1) + dt.timedelta(days=int(rng.integers(0, 365 * 24)))


def _fmt(x: float) -> str:
    return f"{x:.2f}"


def quantitative_description(start: dt.date, columns: dict[str, np.ndarray], specifics: str) -> str:
    """Date range, then per column its minimum and maximum with their dates, then the
    feature's specifics (the paper's quantitative description)."""
    n = len(next(iter(columns.values())))
    end = start + dt.timedelta(days=n - 1)
    parts = [f"This daily time series covers the period from {start} to {end} ({n} days)."]
    for name, x in columns.items():
        lo, hi = int(np.argmin(x)), int(np.argmax(x))
        who = "Its" if len(columns) == 1 else f"{name}'s"
        parts.append(
            f"{who} minimum is {_fmt(x[lo])} on {start + dt.timedelta(days=lo)} and "
            f"its maximum is {_fmt(x[hi])} on {start + dt.timedelta(days=hi)}."
        )
    parts.append(specifics)
    return " ".join(parts)


def generate_sample(
    dataset: str,
    split: str,
    index: int,
    data_seed: int,
    min_length: int = 30,
    max_length: int = 150,
    position_length: int = 175,
    kind: str | None = None,
) -> Sample:
    """Series ``index`` of ``dataset``'s ``split`` (deterministic in its coordinates).

    Position datasets cycle through (quadrant, extreme) by ``index``: 8 cells, so
    ``index // 8`` is the replicate. ``kind`` forces a sub-feature (tests)."""
    if split not in SPLITS:
        raise TsrateError(f"unknown split {split!r}: choose from {', '.join(SPLITS)}")
    seed = sample_seed(data_seed, dataset, split, index)
    rng = np.random.default_rng(seed)
    start = _start_date(rng)
    if dataset in POSITION:
        cell = index % 8
        quadrant, extreme = cell // 2 + 1, ("max", "min")[cell % 2]
        values, labels, qualitative = position_series(
            rng, dataset, position_length, extreme, quadrant
        )
        sub = f"{extreme}_q{labels['extreme_quadrant']}"
        specifics = (
            f"Its {'maximum' if extreme == 'max' else 'minimum'} lies in quadrant "
            f"{labels['extreme_quadrant']}."
        )
        quantitative = quantitative_description(start, {"Value": values}, specifics)
        return Sample(
            dataset, split, index, seed, start, values, sub, labels, qualitative, quantitative
        )
    if dataset not in GENERATORS:
        known = ", ".join((*GENERATORS, *POSITION))
        raise TsrateError(f"unknown dataset {dataset!r}: choose from {known}")
    if not 3 <= min_length <= max_length:
        raise TsrateError(
            f"series lengths must satisfy 3 <= min <= max (got {min_length}, {max_length})"
        )
    n = int(rng.integers(min_length, max_length + 1))
    values, sub, labels, qualitative, specifics = GENERATORS[dataset](rng, n, kind)
    values = np.asarray(values, dtype=float)
    columns = (
        {"Value": values}
        if values.ndim == 1
        else {f"Series{i + 1}": values[:, i] for i in range(values.shape[1])}
    )
    quantitative = quantitative_description(start, columns, specifics)
    labels = {key: _plain(value) for key, value in labels.items()}
    return Sample(
        dataset, split, index, seed, start, values, sub, labels, qualitative, quantitative
    )


def _plain(value):
    """JSON-friendly label values (numpy scalars and lists to Python)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def generate_split(dataset: str, split: str, size: int, data_seed: int, **lengths) -> list[Sample]:
    """The first ``size`` series of a dataset's split."""
    return [generate_sample(dataset, split, i, data_seed, **lengths) for i in range(size)]
