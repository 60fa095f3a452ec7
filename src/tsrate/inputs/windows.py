"""Sliding forecast windows over one ticker's study-period series.

A window is named by ``window_end_date``: the date of its last context value (the forecast
origin). Its context is the ``context_length`` values ending there; its horizon is the next
``horizon`` trading days. Windows lie wholly inside the study period, ``stride`` apart.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tsrate import TsrateError


def window_end_positions(
    length: int, context_length: int, horizon: int, stride: int = 1
) -> np.ndarray:
    """0-based positions of each window's last context value."""
    first = context_length - 1
    last = length - 1 - horizon
    if last < first:
        raise TsrateError(
            f"series too short for one window: {length} trading days, "
            f"need context {context_length} + horizon {horizon} = {context_length + horizon}"
        )
    return np.arange(first, last + 1, stride)


def contexts(values: np.ndarray, end_positions: np.ndarray, context_length: int) -> np.ndarray:
    """(windows × context_length) matrix of the inputs ending at each end position."""
    view = sliding_window_view(np.asarray(values, dtype=float), context_length)
    return view[end_positions - context_length + 1].copy()


def futures(values: np.ndarray, end_positions: np.ndarray, horizon: int) -> np.ndarray:
    """(windows × horizon) matrix of the values after each end position."""
    view = sliding_window_view(np.asarray(values, dtype=float), horizon)
    return view[end_positions + 1].copy()
