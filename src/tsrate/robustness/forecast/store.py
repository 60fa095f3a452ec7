"""Storing computed partitions: forecast rows, quantiles, failed windows, fallback windows
and the partition records, in one transaction per call (all or nothing; see
:func:`store_partitions`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from tsrate.platform.warehouse import transaction
from tsrate.robustness.forecast.plan import Partition
from tsrate.systems.base import QUANTILE_LEVELS, QuantileForecasts, WindowFallback
from tsrate.systems.failures import PartialForecasts, WindowFailure

#: the columns of raw.forecast_quantiles holding each level (q10 = the 0.1 quantile)
QUANTILE_COLUMNS = tuple(f"q{round(level * 100)}" for level in QUANTILE_LEVELS)


def quantile_rows(quantiles: np.ndarray, skip_rows: Iterable[int] = ()) -> np.ndarray:
    """The windows of a (windows × horizon × levels) quantile array that have quantiles
    (every value finite), leaving out ``skip_rows``."""
    n_windows = quantiles.shape[0]
    keep = np.isfinite(quantiles).reshape(n_windows, -1).all(axis=1)
    keep[list(skip_rows)] = False
    return np.flatnonzero(keep)


@dataclasses.dataclass(frozen=True)
class FinishedPartition:
    """One computed partition waiting to be stored: its forecasts as the system returned them
    (an array, or :class:`PartialForecasts` / :class:`QuantileForecasts`) and its time:
    wall ``seconds`` (stored), ``cpu_seconds`` and the worker's one-time ``setup_seconds``
    (reported, not stored). ``fallbacks_known``: whether the forecasts say which windows
    were last-value fallbacks (tsrate's own systems do; imported predictions cannot, so
    their partitions record an unknown count, null, not 0). ``n_copied_windows``: the
    windows whose forecast repeats a stretch of their own context
    (:mod:`tsrate.robustness.forecast.copies`), None when not counted (stored null)."""

    partition: Partition
    partition_key: str
    window_end_dates: np.ndarray
    forecasts: np.ndarray | PartialForecasts | QuantileForecasts
    seconds: float
    cpu_seconds: float | None = None
    setup_seconds: float = 0.0
    fallbacks_known: bool = True
    n_copied_windows: int | None = None


def store_partition(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    partition: Partition,
    partition_key: str,
    window_end_dates: np.ndarray,
    forecasts_array: np.ndarray | PartialForecasts,
    seconds: float,
    fallbacks_known: bool = True,
) -> int:
    """Store one partition in one transaction (see :func:`store_partitions`); returns the
    forecast rows stored."""
    finished = FinishedPartition(
        partition,
        partition_key,
        window_end_dates,
        forecasts_array,
        seconds,
        fallbacks_known=fallbacks_known,
    )
    return store_partitions(con, run_id, [finished])[0]


def store_partitions(
    con: duckdb.DuckDBPyConnection, run_id: str, finished: Sequence[FinishedPartition]
) -> list[int]:
    """Store finished partitions in ONE transaction: all of them or none. Failed windows (a
    :class:`PartialForecasts`) go to ``raw.forecast_failures`` with their raw output and
    reason, not to ``raw.forecasts``; quantiles (a :class:`QuantileForecasts`) go to
    ``raw.forecast_quantiles`` for the windows that have them. Windows a system gave its
    last-value fallback for (``QuantileForecasts.fallbacks``) stay in ``raw.forecasts`` as
    its forecasts and are listed in ``raw.forecast_fallbacks``; the partition record counts
    them (``n_fallback_windows``; null when the forecasts cannot say), and records the
    windows copied from their context (``n_copied_windows``, as given). Rows land in the order of
    ``finished``, as one insert per table (a commit costs a WAL sync: storing the fast
    baselines' partitions one by one was most of the parent's time). Returns the forecast
    rows stored per partition.

    The rows go in as Arrow tables whose text columns are dictionary-encoded (a partition's
    key, system, ticker and perturbation once, not once per row): the run's parent spends
    half the CPU it spent with pandas frames of repeated strings (2.35 -> 1.2 s for the
    default run's 144 partitions, ``benchmarks/bench_store_partitions.py``), CPU the
    forecast workers share."""
    forecasts = _Rows(run_id)
    quantiles = _Rows(run_id)
    failure_rows, fallback_rows, partition_rows, stored = [], [], [], []
    for entry in finished:
        partition, forecasts_array = entry.partition, entry.forecasts
        window_end_dates = np.asarray(entry.window_end_dates)
        quantile_values = None
        fallbacks: tuple[WindowFallback, ...] = ()
        if isinstance(forecasts_array, QuantileForecasts):
            quantile_values = forecasts_array.quantiles
            fallbacks = forecasts_array.fallbacks
            forecasts_array = forecasts_array.point
        failures: tuple[WindowFailure, ...] = ()
        if isinstance(forecasts_array, PartialForecasts):
            failures = forecasts_array.failures
            forecasts_array = forecasts_array.values
        n_windows, horizon = forecasts_array.shape
        failed = {f.row for f in failures}
        kept = np.array([row for row in range(n_windows) if row not in failed], dtype=np.intp)
        forecasts.add(entry, window_end_dates[kept], horizon, forecasts_array[kept].reshape(-1))
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
        fallbacks = tuple(f for f in fallbacks if f.row not in failed)  # stored windows only
        fallback_rows += [
            (
                run_id,
                entry.partition_key,
                partition.system_id,
                partition.ticker,
                pd.Timestamp(window_end_dates[f.row]).date(),
                partition.perturbation_id,
                f.reason,
            )
            for f in fallbacks
        ]
        if quantile_values is not None:
            rows = quantile_rows(quantile_values, failed)
            if len(rows):
                quantiles.add(
                    entry,
                    window_end_dates[rows],
                    horizon,
                    quantile_values[rows].reshape(-1, len(QUANTILE_LEVELS)),
                )
        n_rows = len(kept) * horizon
        partition_rows.append(
            (
                entry.partition_key,
                partition.input_key,
                run_id,
                partition.system_id,
                partition.ticker,
                partition.perturbation_id,
                n_windows,
                n_rows,
                entry.seconds,
                len(fallbacks) if entry.fallbacks_known else None,
                entry.n_copied_windows,
            )
        )
        stored.append(n_rows)
    if not finished:
        return stored
    with transaction(con):
        if failure_rows:
            con.executemany(
                "insert into raw.forecast_failures values "
                "(?, ?, ?, ?, ?, ?, ?, ?, now()::timestamp)",
                failure_rows,
            )
        if fallback_rows:
            con.executemany(
                "insert into raw.forecast_fallbacks values (?, ?, ?, ?, ?, ?, ?, now()::timestamp)",
                fallback_rows,
            )
        forecasts.insert(con, "raw.forecasts", ("forecast",))
        quantiles.insert(con, "raw.forecast_quantiles", QUANTILE_COLUMNS)
        _insert_rows(
            con,
            "insert into raw.forecast_partitions (partition_key, input_key, run_id, system_id, "
            "ticker, perturbation_id, n_windows, n_rows, seconds, n_fallback_windows, "
            "n_copied_windows, finished_at) values ",
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now()::timestamp)",
            partition_rows,
        )
        _insert_rows(
            con,
            "insert into raw.run_partitions values ",
            "(?, ?, false)",
            [(run_id, row[0]) for row in partition_rows],
        )
    return stored


def _insert_rows(
    con: duckdb.DuckDBPyConnection, insert: str, row: str, rows: Sequence[tuple]
) -> None:
    """``rows`` in one statement (``insert`` followed by ``row`` once per row, the values
    bound as parameters): ``executemany`` runs the statement once per row, which cost the
    run's parent more than the forecasts' own insert for the 1-3 partitions of a commit."""
    if rows:
        con.execute(insert + ", ".join([row] * len(rows)), [v for values in rows for v in values])


class _Rows:
    """Rows of raw.forecasts or raw.forecast_quantiles (same leading columns: run, partition
    key, system, ticker, window end date, perturbation, horizon step; then the values),
    gathered partition by partition and inserted as one Arrow table."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.entries: list[FinishedPartition] = []
        self.sizes: list[int] = []
        self.dates: list[np.ndarray] = []
        self.steps: list[np.ndarray] = []
        self.values: list[np.ndarray] = []

    def add(
        self, entry: FinishedPartition, dates: np.ndarray, horizon: int, values: np.ndarray
    ) -> None:
        """One partition's rows: ``dates`` (one per window), steps 1..horizon each, and
        ``values`` (windows × horizon rows, flat or one column per value column)."""
        self.entries.append(entry)
        self.sizes.append(len(dates) * horizon)
        self.dates.append(np.repeat(dates, horizon))
        self.steps.append(np.tile(np.arange(1, horizon + 1, dtype=np.int32), len(dates)))
        self.values.append(values)

    def _text(self, values: list[str]) -> pa.DictionaryArray:
        """A text column holding ``values[i]`` on every row of the i-th partition."""
        codes = np.repeat(np.arange(len(values), dtype=np.int32), self.sizes)
        return pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(values, pa.string()))

    def insert(self, con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str]) -> None:
        if not self.entries or not sum(self.sizes):
            return
        values = np.concatenate(self.values).reshape(sum(self.sizes), len(columns))
        parts = [entry.partition for entry in self.entries]
        new_rows = pa.table(
            {
                "run_id": self._text([self.run_id] * len(parts)),
                "partition_key": self._text([entry.partition_key for entry in self.entries]),
                "system_id": self._text([p.system_id for p in parts]),
                "ticker": self._text([p.ticker for p in parts]),
                "window_end_date": pa.array(np.concatenate(self.dates)),
                "perturbation_id": self._text([p.perturbation_id for p in parts]),
                "horizon_step": np.concatenate(self.steps),
                **{
                    name: np.ascontiguousarray(values[:, i], dtype=np.float64)
                    for i, name in enumerate(columns)
                },
            }
        )
        con.register("tsrate_new_rows", new_rows)
        try:
            con.execute(f"insert into {table} select * from tsrate_new_rows")
        finally:
            con.unregister("tsrate_new_rows")
