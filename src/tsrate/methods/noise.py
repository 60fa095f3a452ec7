"""Floating noise of 0: the one rule every mart follows (raw scores, effects, bootstrap
resamples and interval ends).

A value with ``|x| <= NOISE * max(1, scale)`` is stored as exactly 0, where ``scale`` is the
largest finite |x| of the group the value is compared within (one metric x perturbation;
for a resample matrix, each resample on its own; for interval ends, the group's scores and
ends) and ``NOISE = 1e-12``. E.g. Biased's company APE, 1.8e-14 beside APEs of order 1,
is 0 -- so are the ends of its bootstrap interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Relative floating-noise bound of :func:`snap_to_zero`.
NOISE = 1e-12


def snap_to_zero(values: np.ndarray | Sequence[float], *, scale: float | None = None) -> np.ndarray:
    """Values within floating noise of 0 become exactly 0.

    Rule: ``|x| <= NOISE * max(1, scale)`` -> 0, where ``scale`` defaults to the largest
    finite |x| of ``values`` (one metric x perturbation), and ``NOISE = 1e-12``. E.g. an APE of
    1.8e-14 beside APEs of order 1 is stored as 0. NaN stays NaN.
    """
    x = np.array(values, dtype=float, copy=True)
    finite = np.isfinite(x)
    if scale is None:
        scale = float(np.max(np.abs(x[finite]))) if finite.any() else 0.0
    bound = NOISE * max(1.0, float(scale))
    x[finite & (np.abs(x) <= bound)] = 0.0
    return x


def snap_rows_to_zero(values: np.ndarray) -> np.ndarray:
    """:func:`snap_to_zero` applied to every row of a 2-D array on its own (each row one
    metric x perturbation, e.g. one bootstrap resample of the systems' scores): the rule the
    published scores follow, applied to each resample."""
    x = np.array(values, dtype=float, copy=True)
    if x.size == 0:
        return x
    finite = np.isfinite(x)
    scale = np.max(np.where(finite, np.abs(x), 0.0), axis=1, keepdims=True)
    x[finite & (np.abs(x) <= NOISE * np.maximum(1.0, scale))] = 0.0
    return x


def snap_ties(values: np.ndarray | Sequence[float]) -> np.ndarray:
    """Values within floating noise of each other become one value.

    Rule: in ascending order, a value within ``NOISE * max(1, scale)`` of the first value of
    its run takes that value (``scale``: the largest finite |x| of ``values``, as
    :func:`snap_to_zero`). E.g. the SMAPE of one model's forecasts imported under two ids is
    0.051301985237853356 and 0.051301985237853405 (the order of a parallel mean's
    additions): they must share a rating and a rank, not be split by their last bits. NaN
    stays NaN.
    """
    x = np.array(values, dtype=float, copy=True)
    return snap_row_ties(x.reshape(1, -1))[0] if x.size else x


def snap_row_ties(values: np.ndarray) -> np.ndarray:
    """:func:`snap_ties` applied to every row of a 2-D array on its own (each row one metric
    x perturbation, one task, or one bootstrap resample of the systems' scores)."""
    x = np.array(values, dtype=float, copy=True)
    if x.ndim != 2 or x.shape[1] < 2:
        return x
    finite = np.isfinite(x)
    scale = np.max(np.where(finite, np.abs(x), 0.0), axis=1)
    bound = NOISE * np.maximum(1.0, scale)
    order = np.argsort(x, axis=1, kind="stable")  # NaN last
    xs = np.take_along_axis(x, order, axis=1)
    start = xs[:, 0].copy()
    for column in range(1, xs.shape[1]):
        value = xs[:, column]
        tied = value - start <= bound  # False for NaN
        start = np.where(tied | np.isnan(value), start, value)
        xs[:, column] = np.where(tied, start, value)
    np.put_along_axis(x, order, xs, axis=1)
    return x
