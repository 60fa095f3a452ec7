"""Copied windows: forecasts that repeat a stretch of the system's own input.

A window's point forecast (its d values) is a **copy** when it equals a contiguous stretch
of d values of the window's context, anywhere in it (its start, middle or end), value by
value within a relative tolerance of :data:`COPY_RTOL` (``|f - c| <= 1e-9 · max(|f|, |c|)``:
float equality up to the last bits, so a forecast that only comes close is not a copy). The
context is compared **as the system was shown it**: a system that prints its context as text
with a fixed number of decimals (the language models' ``decimals`` setting, 2: cents) saw
each value rounded that way, so its copy is of the printed values; every other system saw
the values themselves. A missing value (NaN) matches nothing.

Constant stretches follow the rule as stated: a flat forecast (one value d times) is a copy
only where the context itself holds d consecutive values equal to it; a flat forecast
holding the last price of a context whose last values differ (the naive baseline on real
prices) is not. A horizon of one value is never counted (null): any single forecast equal
to a context value, the last one included, would be a "copy", which says nothing.

A copy is still the system's forecast and is scored as such; the count per partition
(``raw.forecast_partitions.n_copied_windows``) only makes it visible. The run counts copies
in its own process when it stores a partition, where each window's context and forecast are
both at hand, for every system: each window's first forecast value is compared with the
first value of each of the context's n - d + 1 stretches, and only the stretches that match
are compared whole, O(windows · n + matches · d), vectorised (under a millisecond for 250
windows of 80 values and a horizon of 20)."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tsrate.systems.base import ForecastBatch, QuantileForecasts
from tsrate.systems.failures import PartialForecasts

#: the relative tolerance of a copied value (see the module doc)
COPY_RTOL = 1e-9


def shown_decimals(system: Any) -> int | None:
    """The decimals a system prints its context with (a language model's ``decimals``
    setting), or None for a system that reads the values themselves."""
    decimals = getattr(getattr(system, "settings", None), "decimals", None)
    return decimals if isinstance(decimals, int) and not isinstance(decimals, bool) else None


def shown_contexts(contexts: np.ndarray, decimals: int | None) -> np.ndarray:
    """The contexts as the system saw them: each value as printed with ``decimals`` places
    (read back from that text, as the prompt wrote it), or unchanged for None."""
    values = np.asarray(contexts, dtype=float)
    if decimals is None:
        return values
    # numpy's rounding is the printed value's except next to a half (binary halves round as
    # their exact value does in the text): those few are printed and read back
    shown = np.round(values, decimals)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = values * 10.0**decimals
        tricky = np.isfinite(values) & (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
    shown[tricky] = [float(f"{v:.{decimals}f}") for v in values[tricky]]
    shown[~np.isfinite(values)] = np.nan  # the prompt writes NaN for any non-finite value
    return shown


def copied_windows(
    contexts: np.ndarray, forecasts: np.ndarray, decimals: int | None = None
) -> np.ndarray:
    """For each window (row), whether its forecast is a copy of a stretch of its context
    (see the module doc). ``contexts``: windows × n; ``forecasts``: windows × d (a failed
    window's NaN row is never a copy)."""
    shown = shown_contexts(contexts, decimals)
    values = np.asarray(forecasts, dtype=float)
    n_windows, horizon = values.shape
    copied = np.zeros(n_windows, dtype=bool)
    if horizon < 1 or shown.shape[1] < horizon:
        return copied
    # the stretches whose first value matches the forecast's first (few), then those whole
    starts = shown[:, : shown.shape[1] - horizon + 1]
    rows, columns = np.nonzero(_close(starts, values[:, :1]))
    stretches = sliding_window_view(shown, horizon, axis=1)[rows, columns]  # k × d
    whole = _close(stretches, values[rows]).all(axis=1)
    copied[rows[whole]] = True
    return copied


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``|a - b| <= COPY_RTOL · max(|a|, |b|)`` elementwise (broadcast); NaN is never close."""
    with np.errstate(invalid="ignore"):
        return np.abs(a - b) <= COPY_RTOL * np.maximum(np.abs(a), np.abs(b))


def count_copied_windows(
    contexts: np.ndarray, forecasts: np.ndarray, decimals: int | None = None
) -> int | None:
    """How many windows' forecasts are copies of their context; None for a horizon of one
    value (not counted, see the module doc)."""
    if np.asarray(forecasts).shape[1] < 2:
        return None
    return int(copied_windows(contexts, forecasts, decimals).sum())


def point_forecasts(forecasts: np.ndarray | PartialForecasts | QuantileForecasts) -> np.ndarray:
    """The windows × horizon point forecasts of a system's output (a failed window's row NaN)."""
    if isinstance(forecasts, QuantileForecasts):
        forecasts = forecasts.point
    if isinstance(forecasts, PartialForecasts):
        forecasts = forecasts.values
    return np.asarray(forecasts, dtype=float)


def partition_copies(
    batch: ForecastBatch,
    forecasts: np.ndarray | PartialForecasts | QuantileForecasts,
    system: Any,
) -> int | None:
    """The copied windows of one computed partition: ``system``'s ``forecasts`` of ``batch``
    against the contexts as it saw them (:func:`count_copied_windows`)."""
    return count_copied_windows(batch.contexts, point_forecasts(forecasts), shown_decimals(system))


def copied_window_counts(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, int]:
    """Windows whose forecast repeats a stretch of their own context, per system with any,
    over the partitions the run uses (none where the count is unknown, or in a warehouse
    made before copies were counted)."""
    try:
        counts = con.execute(
            "select system_id, sum(n_copied_windows)::integer from raw.forecast_partitions "
            "where partition_key in (select partition_key from raw.run_partitions "
            "where run_id = ?) group by system_id having sum(n_copied_windows) > 0 "
            "order by system_id",
            [run_id],
        ).fetchall()
    except (duckdb.BinderException, duckdb.CatalogException):
        return {}
    return dict(counts)


def copied_lines(counts: dict[str, int]) -> list[str]:
    """The run summary's line per system with copied windows (``counts``, for logs/CLI)."""
    return [
        f"{s}: {n} window(s) whose forecast repeats a stretch of its own input (scored "
        "as its forecasts; see marts.forecast_failures_summary.n_copied_windows)"
        for s, n in sorted(counts.items())
    ]
