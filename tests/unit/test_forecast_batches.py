"""Batches are built one partition at a time, and the pool keeps only a few in flight.

A 500-ticker x 10-year study has 6,000 partitions; building every batch before the first
forecast held 12 GB. These tests pin the lazy batches (the worker pool itself, which starts
processes, is tested in tests/integration/test_forecast_pool.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.warehouses import ingest, small_study
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast import execute as forecasting
from tsrate.robustness.forecast.execute import LazyBatches
from tsrate.robustness.forecast.plan import Partition, load_series, make_batch


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    path = tmp_path_factory.mktemp("batches") / "tsrate.duckdb"
    ingest(path, ["AAPL", "JPM"])
    return path


def study():
    return small_study(
        study_tickers=["AAPL", "JPM"], systems=["naive", "random", "biased"], horizon=5
    )


def test_batches_are_built_on_demand_and_released(warehouse):
    s = study()
    with connect(warehouse, read_only=True) as con:
        series = load_series(con, s)
    todo = [
        Partition("naive", "AAPL", "P0", "k1"),
        Partition("naive", "JPM", "P2", "k2"),
    ]
    batches = LazyBatches(s, series, todo)
    assert len(batches) == 2 and list(batches) == todo and batches.n_held == 0
    first = batches[todo[1]]
    expected = make_batch(s, series["JPM"], "P2")
    np.testing.assert_array_equal(first.contexts, expected.contexts)
    np.testing.assert_array_equal(first.window_end_dates, expected.window_end_dates)
    assert batches[todo[1]] is first and batches.n_held == 1  # kept until released
    batches.release(todo[1])
    assert batches.n_held == 0
    np.testing.assert_array_equal(batches[todo[1]].contexts, expected.contexts)  # rebuilt alike
    with pytest.raises(KeyError):
        batches[Partition("naive", "MSFT", "P0", "k3")]


@pytest.mark.parametrize(
    ("encoder", "expected"),
    [
        # fracast's prefix encoder (~8 ms a window) is cheaper than an ARIMA fit (~15 ms);
        # naive's change quantiles (~0.35 ms) cost more than biased's offset (~0)
        ("prefix", ["arima", "fracast", "naive", "biased"]),
        # fracast's full 2048-step pass (~37 ms) is the costliest
        ("full", ["fracast", "arima", "naive", "biased"]),
    ],
)
def test_partitions_run_costliest_system_first(monkeypatch, encoder, expected):
    pytest.importorskip("fracast")
    monkeypatch.setenv("TSRATE_FRACAST_ENCODER", encoder)
    s = small_study(study_tickers=["AAPL", "JPM"], systems=["naive", "biased", "fracast", "arima"])
    systems = forecasting.resolve_systems(s, load_companies())
    todo = [
        Partition(system, ticker, "P0", f"{system}{ticker}")
        for ticker in ("JPM", "AAPL")
        for system in ("naive", "fracast", "biased", "arima")
    ]
    ordered = forecasting.order_partitions(todo, systems)
    assert len(ordered) == len(todo) and set(ordered) == set(todo)
    assert [p.system_id for p in ordered[::2]] == expected  # each system's partitions together
    assert [p.ticker for p in ordered[:2]] == ["AAPL", "JPM"]
