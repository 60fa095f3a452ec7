"""Multivariate feature families (paper Appendix B.2): correlation, cross-correlation and
dynamic conditional correlation."""

from __future__ import annotations

import numpy as np

from tsrate.suites.understanding.generators.base import (
    ar1,
    pick,
)

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
    kind = pick(rng, CORRELATION_KINDS, kind)
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
    kind = pick(rng, CROSS_KINDS, kind)
    sign = 1.0 if kind.startswith("positive") else -1.0
    lag = 0 if kind.endswith("direct") else int(rng.integers(2, 7))
    x = ar1(rng, n + lag, 0.3)
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
    kind = pick(rng, DCC_KINDS, kind)
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
