"""Storing computed partitions: forecast rows, quantiles, failed windows and the partition
records, in one transaction per call (all or nothing; see :func:`store_partitions`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import duckdb
import numpy as np
import pandas as pd

from tsrate.platform.warehouse import transaction
from tsrate.robustness.forecast.plan import Partition
from tsrate.systems.base import QUANTILE_LEVELS, QuantileForecasts
from tsrate.systems.failures import PartialForecasts, WindowFailure

#: the columns of raw.forecast_quantiles holding each level (q10 = the 0.1 quantile)
QUANTILE_COLUMNS = tuple(f"q{round(level * 100)}" for level in QUANTILE_LEVELS)


def quantile_frame(
    window_end_dates: np.ndarray, quantiles: np.ndarray, skip_rows: Iterable[int] = ()
) -> pd.DataFrame:
    """Long-by-step, wide-by-level rows of a (windows × horizon × levels) quantile array,
    leaving out windows without quantiles (all NaN) and the rows in ``skip_rows``."""
    n_windows, horizon, _ = quantiles.shape
    keep = np.isfinite(quantiles).reshape(n_windows, -1).all(axis=1)
    keep[list(skip_rows)] = False
    rows = np.flatnonzero(keep)
    frame = pd.DataFrame(
        {
            "window_end_date": np.repeat(np.asarray(window_end_dates)[rows], horizon),
            "horizon_step": np.tile(np.arange(1, horizon + 1, dtype=np.int32), len(rows)),
        }
    )
    values = quantiles[rows].reshape(-1, len(QUANTILE_LEVELS))
    for column, level_values in zip(QUANTILE_COLUMNS, values.T, strict=True):
        frame[column] = level_values
    return frame


@dataclasses.dataclass(frozen=True)
class FinishedPartition:
    """One computed partition waiting to be stored: its forecasts as the system returned them
    (an array, or :class:`PartialForecasts` / :class:`QuantileForecasts`) and its time:
    wall ``seconds`` (stored), ``cpu_seconds`` and the worker's one-time ``setup_seconds``
    (reported, not stored)."""

    partition: Partition
    partition_key: str
    window_end_dates: np.ndarray
    forecasts: np.ndarray | PartialForecasts | QuantileForecasts
    seconds: float
    cpu_seconds: float | None = None
    setup_seconds: float = 0.0


def store_partition(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    partition: Partition,
    partition_key: str,
    window_end_dates: np.ndarray,
    forecasts_array: np.ndarray | PartialForecasts,
    seconds: float,
) -> int:
    """Store one partition in one transaction (see :func:`store_partitions`); returns the
    forecast rows stored."""
    finished = FinishedPartition(
        partition, partition_key, window_end_dates, forecasts_array, seconds
    )
    return store_partitions(con, run_id, [finished])[0]


def store_partitions(
    con: duckdb.DuckDBPyConnection, run_id: str, finished: Sequence[FinishedPartition]
) -> list[int]:
    """Store finished partitions in ONE transaction: all of them or none. Failed windows (a
    :class:`PartialForecasts`) go to ``raw.forecast_failures`` with their raw output and
    reason, not to ``raw.forecasts``; quantiles (a :class:`QuantileForecasts`) go to
    ``raw.forecast_quantiles`` for the windows that have them. Rows land in the order of
    ``finished``, as one insert per table (a commit costs a WAL sync: storing the fast
    baselines' partitions one by one was most of the parent's time). Returns the forecast
    rows stored per partition."""
    frames, quantile_frames, failure_rows, partition_rows, stored = [], [], [], [], []
    for entry in finished:
        partition, forecasts_array = entry.partition, entry.forecasts
        window_end_dates = entry.window_end_dates
        quantiles = None
        if isinstance(forecasts_array, QuantileForecasts):
            quantiles = forecasts_array.quantiles
            forecasts_array = forecasts_array.point
        failures: tuple[WindowFailure, ...] = ()
        if isinstance(forecasts_array, PartialForecasts):
            failures = forecasts_array.failures
            forecasts_array = forecasts_array.values
        n_windows, horizon = forecasts_array.shape
        frame = pd.DataFrame(
            {
                "run_id": run_id,
                "partition_key": entry.partition_key,
                "system_id": partition.system_id,
                "ticker": partition.ticker,
                "window_end_date": np.repeat(window_end_dates, horizon),
                "perturbation_id": partition.perturbation_id,
                "horizon_step": np.tile(np.arange(1, horizon + 1, dtype=np.int32), n_windows),
                "forecast": forecasts_array.reshape(-1),
            }
        )
        if failures:
            failed_dates = {window_end_dates[f.row] for f in failures}
            frame = frame[~frame["window_end_date"].isin(failed_dates)]
        frames.append(frame)
        failure_rows += [
            (
                run_id,
                entry.partition_key,
                partition.system_id,
                partition.ticker,
                pd.Timestamp(window_end_dates[f.row]).date(),
                partition.perturbation_id,
                f.reason,
                f.raw_text,
            )
            for f in failures
        ]
        if quantiles is not None:
            levels = quantile_frame(window_end_dates, quantiles, [f.row for f in failures])
            if len(levels):
                levels.insert(0, "run_id", run_id)
                levels.insert(1, "partition_key", entry.partition_key)
                levels.insert(2, "system_id", partition.system_id)
                levels.insert(3, "ticker", partition.ticker)
                levels.insert(5, "perturbation_id", partition.perturbation_id)
                quantile_frames.append(levels)
        partition_rows.append(
            (
                entry.partition_key,
                partition.input_key,
                run_id,
                partition.system_id,
                partition.ticker,
                partition.perturbation_id,
                n_windows,
                len(frame),
                entry.seconds,
            )
        )
        stored.append(len(frame))
    if not finished:
        return stored
    with transaction(con):
        if failure_rows:
            con.executemany(
                "insert into raw.forecast_failures values "
                "(?, ?, ?, ?, ?, ?, ?, ?, now()::timestamp)",
                failure_rows,
            )
        _insert_frame(con, "raw.forecasts", frames)
        if quantile_frames:
            _insert_frame(con, "raw.forecast_quantiles", quantile_frames)
        con.executemany(
            "insert into raw.forecast_partitions values "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, now()::timestamp)",
            partition_rows,
        )
        con.executemany(
            "insert into raw.run_partitions values (?, ?, false)",
            [(run_id, row[0]) for row in partition_rows],
        )
    return stored


def _insert_frame(con: duckdb.DuckDBPyConnection, table: str, frames: list[pd.DataFrame]) -> None:
    """Append the frames' rows to ``table`` (same columns, same order) in one insert."""
    new_rows = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    con.register("tsrate_new_rows", new_rows)
    try:
        con.execute(f"insert into {table} select * from tsrate_new_rows")
    finally:
        con.unregister("tsrate_new_rows")
