"""Whether a rating's score can separate its system from the others.

Two rules, one per kind of noise a score carries:

* :func:`separability`: the score's spread over treatment draws (APE/PIE with several
  draws, ``int_ratings_assigned``);
* :func:`bootstrap_separation`: the PAIRED circular block bootstrap over window dates behind
  ``rating_stability`` (every system of a run is resampled on the same window dates, one
  seed), for every rated metric (accuracy, WRS, APE/PIE).

Bootstrap rule (:func:`bootstrap_separation`), per metric x perturbation: for systems i and
j with a published score, take the per-resample difference ``boot_i - boot_j`` over the
resamples where both are finite and its percentile interval at the bootstrap's
``confidence`` (tails ``(1 - confidence) / 2``, the interval of ``rating_stability``'s
``ci_low``/``ci_high``), extended to the point difference where it lies outside
(:func:`tsrate.methods.ratings.interval_holding_the_point`); differences within floating
noise of 0 are 0 (:func:`tsrate.methods.noise.snap_to_zero`, on the largest |score| of the
perturbation, points and resamples). System i is NOT separable when some j's interval
contains 0, ends included (``low <= 0 <= high``; tied systems differ by 0 in every
resample: the reason then says "tied with <other> in every resample"). The rule is
symmetric in direction: negating every score (a higher-is-better metric) negates the
intervals and leaves the answer unchanged. A system with no valid resample (or no
published score) gets ``None``: nothing can be said; one with no other system to compare
with is separable.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tsrate.methods.noise import snap_to_zero

__all__ = ["separability", "bootstrap_separation", "difference_interval"]


def separability(
    systems: Sequence[str],
    scores: np.ndarray | Sequence[float],
    spreads: np.ndarray | Sequence[float],
) -> tuple[list[bool | None], list[str | None]]:
    """Which systems' scores are separable given each score's spread (e.g. over draws).

    System i is NOT separable when some other system j has ``|s_i - s_j| < max(spread_i,
    spread_j)``: their difference is smaller than the noise of either. A system whose spread
    is unknown (NaN, e.g. one draw, or a metric without draws) gets ``None``: nothing can be
    said. Returns (separable per system, reason per system naming the closest inseparable
    system; None when separable or unknown).
    """
    s = np.asarray(scores, dtype=float)
    sp = np.asarray(spreads, dtype=float)
    names = [str(x) for x in systems]
    if not (len(names) == s.size == sp.size):
        raise ValueError("systems, scores and spreads must have the same length")
    out: list[bool | None] = []
    reasons: list[str | None] = []
    for i in range(s.size):
        if not (np.isfinite(sp[i]) and np.isfinite(s[i])):
            out.append(None)
            reasons.append(None)
            continue
        diff = np.abs(s - s[i])
        bound = np.fmax(sp, sp[i])
        close = [j for j in range(s.size) if j != i and np.isfinite(s[j]) and diff[j] < bound[j]]
        out.append(not close)
        if close:
            j = min(close, key=lambda k: (diff[k], names[k]))
            reasons.append(
                f"not separable from {names[j]}: the scores differ by {diff[j]:.3g}, less than "
                f"their spread {bound[j]:.3g}"
            )
        else:
            reasons.append(None)
    return out, reasons


def difference_interval(
    point_i: float, point_j: float, boot_i: np.ndarray, boot_j: np.ndarray, confidence: float
) -> tuple[float, float, float] | None:
    """(point difference, low, high) of ``boot_i - boot_j`` by the rule of the module
    docstring, before snapping; ``None`` when no resample has both scores."""
    both = np.isfinite(boot_i) & np.isfinite(boot_j)
    if not both.any():
        return None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot_i[both] - boot_j[both], [tail, 1.0 - tail])
    point = float(point_i) - float(point_j)
    return point, min(float(low), point), max(float(high), point)


def _tied_throughout(boot_i: np.ndarray, boot_j: np.ndarray, scale: float) -> bool:
    """Whether two systems' resampled scores are equal (within floating noise of 0 on
    ``scale``) in every resample where both are defined."""
    both = np.isfinite(boot_i) & np.isfinite(boot_j)
    return bool(both.any()) and not snap_to_zero(boot_i[both] - boot_j[both], scale=scale).any()


def bootstrap_separation(
    groups: pd.DataFrame,
    point: np.ndarray | Sequence[float],
    boot: np.ndarray,
    confidence: float,
    metric: str,
) -> tuple[list[bool | None], list[str | None]]:
    """Separable per column of ``boot`` (resamples x groups; ``groups`` has ``system_id`` and
    ``perturbation_id`` per column, ``point`` the published scores) by the paired bootstrap
    rule of the module docstring, systems compared within their perturbation, and the
    reason naming the closest system it cannot be separated from (by |point difference|,
    then name); ``None`` where separable or unknown."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie strictly between 0 and 1")
    point = np.asarray(point, dtype=float)
    boot = np.asarray(boot, dtype=float)
    if point.shape != (len(groups),) or boot.ndim != 2 or boot.shape[1] != len(groups):
        raise ValueError("point must be (groups,) and boot (resamples x groups)")
    names = groups["system_id"].astype(str).to_numpy()
    perts = groups["perturbation_id"].to_numpy()
    flags: list[bool | None] = [None] * len(groups)
    reasons: list[str | None] = [None] * len(groups)
    known = np.isfinite(point) & np.isfinite(boot).any(axis=0)
    percent = f"{100.0 * confidence:g} %"
    for pert in pd.unique(perts):
        cols = np.flatnonzero((perts == pert) & known)
        values = np.concatenate([point[cols], boot[:, cols].ravel()])
        scale = float(np.max(np.abs(values[np.isfinite(values)]), initial=0.0))
        for i in cols:
            close = []
            for j in cols:
                if j == i:
                    continue
                found = difference_interval(point[i], point[j], boot[:, i], boot[:, j], confidence)
                if found is None:
                    continue
                diff, low, high = snap_to_zero(found, scale=scale)
                if low <= 0.0 <= high:
                    tied = diff == 0.0 and _tied_throughout(boot[:, i], boot[:, j], scale)
                    close.append((abs(diff), names[j], diff, low, high, tied))
            flags[i] = not close
            if close:
                _, other, diff, low, high, tied = min(close)
                reasons[i] = (
                    f"not separable from {other}: tied with {other} in every resample"
                    if tied
                    else f"not separable from {other}: the {metric} difference {diff:.3g} has "
                    f"a {percent} bootstrap interval [{low:.3g}, {high:.3g}] that includes 0"
                )
    return flags, reasons
