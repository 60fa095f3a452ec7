"""References for the statistical analyst's tests (``understanding/analyst.py``; the tests:
tests/unit/test_sweep6_understanding_series.py, test_sweep6_understanding_properties.py,
test_sweep6_understanding_answers.py), written out from its docstring independently: least
squares and its t-test by formula, the one-sided periodogram from ``numpy.fft``, a rolling
median by loop, the Gaussian likelihood-ratio scan by loop, Pearson's r and skewness from
moments. The product's own helpers are never used here. No test here.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

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


def base_series(n=100):
    """Changes of exactly +-0.2 (noise sd 0.2 / (0.6745 sqrt 2)), no trend, no spike."""
    return 0.1 * np.resize([1.0, -1.0], n)


def columns_of(*arrays):
    return {f"V{i}": list(a) for i, a in enumerate(arrays)}
