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
both at hand, for every system: a comparison of each window's d values with each of the
context's n - d + 1 stretches, O(windows · n · d), vectorised (well under a millisecond for
a default partition)."""

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
    flat = [float(f"{v:.{decimals}f}") if np.isfinite(v) else np.nan for v in values.ravel()]
    return np.array(flat, dtype=float).reshape(values.shape)


def copied_windows(
    contexts: np.ndarray, forecasts: np.ndarray, decimals: int | None = None
) -> np.ndarray:
    """For each window (row), whether its forecast is a copy of a stretch of its context
    (see the module doc). ``contexts``: windows × n; ``forecasts``: windows × d (a failed
    window's NaN row is never a copy)."""
    shown = shown_contexts(contexts, decimals)
    values = np.asarray(forecasts, dtype=float)
    n_windows, horizon = values.shape
    if horizon < 1 or shown.shape[1] < horizon:
        return np.zeros(n_windows, dtype=bool)
    stretches = sliding_window_view(shown, horizon, axis=1)  # windows × (n - d + 1) × d
    wanted = values[:, None, :]
    scale = np.maximum(np.abs(stretches), np.abs(wanted))
    with np.errstate(invalid="ignore"):
        close = np.abs(stretches - wanted) <= COPY_RTOL * scale
    return close.all(axis=2).any(axis=1)


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
