"""Position-bias sets (paper Appendix C): the extreme (and the queried date) placed by
quadrant."""

from __future__ import annotations

import numpy as np

from tsrate import TsrateError
from tsrate.suites.understanding.generators.base import (
    POSITION,
)

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
