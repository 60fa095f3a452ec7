"""Partitions that finish together are stored in one transaction (one commit, one insert
per table): the rows must be exactly those of storing them one by one, in the same order,
and a batch that cannot be stored whole leaves nothing of itself behind."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from tsrate.platform.raw_schema import create_raw_tables
from tsrate.robustness.forecast.plan import Partition
from tsrate.robustness.forecast.store import (
    FinishedPartition,
    store_partition,
    store_partitions,
)
from tsrate.systems.base import QUANTILE_LEVELS, QuantileForecasts
from tsrate.systems.failures import PartialForecasts, WindowFailure

RUN = "run-1"
TABLES = {  # every raw table a partition writes, and the columns that identify a row
    "raw.forecasts": "*",
    "raw.forecast_quantiles": "*",
    "raw.forecast_failures": "* exclude (recorded_at)",
    "raw.forecast_partitions": "* exclude (finished_at)",
    "raw.run_partitions": "*",
}


def _finished() -> list[FinishedPartition]:
    rng = np.random.default_rng(7)
    dates = pd.date_range("2020-01-01", periods=5, freq="B").values
    horizon = 3
    plain = rng.normal(100, 5, (5, horizon))
    partial = PartialForecasts(
        rng.normal(50, 2, (5, horizon)),
        (WindowFailure(1, "no number in the reply", "?"), WindowFailure(3, "too short", "1")),
    )
    point = rng.normal(10, 1, (5, horizon))
    spread = np.sort(rng.normal(0, 1, (5, horizon, len(QUANTILE_LEVELS))), axis=2)
    quantiles = QuantileForecasts(point, point[:, :, None] + spread)
    return [
        FinishedPartition(Partition("naive", "AAPL", "P0", "k1"), "k1", dates, plain, 0.5),
        FinishedPartition(Partition("llm", "MSFT", "P1", "k2"), "k2", dates, partial, 1.5),
        FinishedPartition(Partition("arima", "JPM", "P2", "k3"), "k3", dates, quantiles, 2.5),
    ]


def _warehouse() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:")
    create_raw_tables(con)
    return con


def _rows(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    """Every table's rows in the order they were inserted (DuckDB's rowid)."""
    return {
        table: con.execute(f"select {columns} from {table} order by rowid").fetchall()
        for table, columns in TABLES.items()
    }


def test_one_batch_stores_the_rows_of_one_by_one_in_the_same_order() -> None:
    together, alone = _warehouse(), _warehouse()
    counts = store_partitions(together, RUN, _finished())
    one_by_one = [
        store_partition(
            alone, RUN, f.partition, f.partition_key, f.window_end_dates, f.forecasts, f.seconds
        )
        for f in _finished()
    ]
    assert counts == one_by_one == [15, 9, 15]  # the partial partition loses 2 windows x 3 steps
    stored = _rows(together)
    assert stored == _rows(alone)
    # and those rows are the arrays given: not merely equal to each other
    forecasts = pd.DataFrame(stored["raw.forecasts"]).groupby(1)[7].apply(list).to_dict()
    inputs = _finished()
    assert forecasts["k1"] == inputs[0].forecasts.reshape(-1).tolist()
    assert forecasts["k2"] == np.delete(inputs[1].forecasts.values, [1, 3], 0).ravel().tolist()
    quantile_rows = np.array([row[7:] for row in stored["raw.forecast_quantiles"]])
    np.testing.assert_array_equal(quantile_rows, inputs[2].forecasts.quantiles.reshape(-1, 9))
    assert [(r[0], r[6]) for r in stored["raw.forecast_failures"]] == [
        (RUN, "no number in the reply"),
        (RUN, "too short"),
    ]
    assert [r[0] for r in stored["raw.forecast_partitions"]] == ["k1", "k2", "k3"]
    assert [r[7] for r in stored["raw.forecast_partitions"]] == [15, 9, 15]  # n_rows


def test_a_batch_that_cannot_be_stored_whole_leaves_nothing() -> None:
    con = _warehouse()
    first, *rest = _finished()
    store_partitions(con, RUN, [first])
    before = _rows(con)
    # k1 again in the same run breaks raw.run_partitions' key: the whole batch rolls back
    with pytest.raises(duckdb.ConstraintException):
        store_partitions(con, RUN, [*rest, first])
    assert _rows(con) == before
    assert store_partitions(con, RUN, []) == []
