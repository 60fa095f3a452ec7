"""Fallback windows: a window a system did not really forecast (its model failed there and it
gave the last observed value) is stored as its forecast and recorded in
raw.forecast_fallbacks, counted per partition (raw.forecast_partitions.n_fallback_windows).

Real parts: a real ARIMA run (statsmodels, in this process: workers=1) on real prices in a
DuckDB file, on a study where some fits must fail: ARIMA(1,2,1) on 3-value contexts.
Twice-differenced, a fully observed context leaves one value, too few for statsmodels' start
values (an IndexError inside SARIMAX), while a context with one missing value (P3) fits. The
test finds the failing windows itself, with statsmodels alone, from the stored inputs.
"""

from __future__ import annotations

import dataclasses
import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest

from tests.support.fallback_study import HORIZON, ORDER, cold_fit_fails, stored_contexts, study
from tests.support.import_study import imported_partition_counts
from tests.support.warehouses import ingest, read, rows
from tsrate.config import load_companies
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.distributed import read_partition_file, write_partition_file
from tsrate.robustness.forecast.execute import run_forecasts, run_problems
from tsrate.robustness.forecast.plan import Partition
from tsrate.robustness.forecast.store import FinishedPartition, store_partition, store_partitions
from tsrate.systems.base import (
    QUANTILE_LEVELS,
    ForecastBatch,
    ForecastOutputError,
    QuantileForecasts,
    WindowFallback,
    check_fallbacks,
)
from tsrate.systems.failures import PartialForecasts, WindowFailure
from tsrate.systems.fracast_model import MIN_FINITE, FracastSystem


@pytest.fixture(scope="module")
def fallback_run(tmp_path_factory):
    warehouse = tmp_path_factory.mktemp("fallback") / "tsrate.duckdb"
    ingest(warehouse, ["AAPL"])
    with connect(warehouse) as con, np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = run_forecasts(con, study(), load_companies(), workers=1, progress=print)
    return warehouse, summary


def test_a_real_arima_run_records_exactly_the_windows_whose_fit_fails(fallback_run):
    warehouse, summary = fallback_run
    contexts = stored_contexts(warehouse)
    contexts["fails"] = [cold_fit_fails(c) for c in contexts["context"]]
    expected = contexts[contexts["fails"]]
    # the study is one where some windows fail and others do not
    assert 0 < len(expected) < len(contexts)
    recorded = read(
        warehouse,
        "select ticker, perturbation_id, window_end_date, reason, run_id "
        "from raw.forecast_fallbacks where system_id = 'arima' order by all",
    )
    assert sorted(zip(recorded.ticker, recorded.perturbation_id, recorded.window_end_date.dt.date, strict=True)) == sorted(
        zip(expected.ticker, expected.perturbation_id, expected.window_end_date, strict=True)
    )  # fmt: skip
    assert (recorded["reason"] == "the context is too short for statsmodels' start values").all()
    assert set(recorded["run_id"]) == {summary.run_id}
    assert rows(
        warehouse, "select count(*) from raw.forecast_fallbacks where system_id <> 'arima'"
    ) == [(0,)]

    # the run says so (the summary, logged by the flow; `tsrate run` prints run_problems)
    assert summary.fallback_windows == {"arima": len(expected)}
    line = f"arima: {len(expected)} window(s) forecast by the last-value fallback, not the model"
    assert any(problem.startswith(line) for problem in summary.describe_problems())
    with connect(warehouse, read_only=True) as con:
        assert run_problems(con, summary.run_id) == summary.describe_problems()

    # each partition counts its own fallback windows; naive has none (0, not unknown)
    partitions = read(
        warehouse,
        "select system_id, ticker, perturbation_id, n_windows, n_fallback_windows "
        "from raw.forecast_partitions",
    )
    per_cell = expected.groupby(["ticker", "perturbation_id"]).size()
    for row in partitions.itertuples():
        want = per_cell.get((row.ticker, row.perturbation_id), 0) if row.system_id == "arima" else 0
        assert row.n_fallback_windows == want, row


def test_fallback_windows_keep_their_last_value_forecast_and_have_no_quantiles(fallback_run):
    """Recording fallbacks changes no forecast: a fallback window's stored forecast is its
    last observed value at every step, as before, and it has no quantiles."""
    warehouse, _ = fallback_run
    contexts = stored_contexts(warehouse).set_index(
        ["ticker", "perturbation_id", "window_end_date"]
    )
    forecasts = read(
        warehouse,
        "select f.ticker, f.perturbation_id, f.window_end_date, f.horizon_step, f.forecast "
        "from raw.forecasts f join raw.forecast_fallbacks b using (partition_key, window_end_date) "
        "where f.system_id = 'arima'",
    )
    assert (
        len(forecasts)
        == HORIZON * rows(warehouse, "select count(*) from raw.forecast_fallbacks")[0][0]
    )
    for row in forecasts.itertuples():
        context = contexts.loc[
            (row.ticker, row.perturbation_id, row.window_end_date.date()), "context"
        ]
        assert row.forecast == context[~np.isnan(context)][-1]
    with_quantiles = (
        "select count(*) from raw.forecast_quantiles q join raw.forecast_fallbacks b "
        "using (partition_key, window_end_date)"
    )
    assert rows(warehouse, with_quantiles) == [(0,)]


def test_a_rerun_reuses_the_partitions_with_their_fallback_windows(fallback_run):
    warehouse, first = fallback_run
    before = read(warehouse, "select * from raw.forecast_fallbacks order by all")
    with connect(warehouse) as con:
        second = run_forecasts(con, study(), load_companies(), workers=1, progress=print)
    assert second.computed == 0 and second.reused == first.partitions
    assert second.fallback_windows == first.fallback_windows  # reused, still counted
    assert read(warehouse, "select * from raw.forecast_fallbacks order by all").equals(before)
    reused = rows(
        warehouse,
        "select count(*) from raw.forecast_fallbacks where partition_key in "
        "(select partition_key from raw.run_partitions where run_id = ?)",
        [second.run_id],
    )
    assert reused == [(len(before),)]


# -- the raw schema ------------------------------------------------------------------------

OLD_PARTITIONS_DDL = """
create schema raw;
create table raw.forecast_partitions (
    partition_key varchar primary key, input_key varchar not null, run_id varchar not null,
    system_id varchar not null, ticker varchar not null, perturbation_id varchar not null,
    n_windows integer not null, n_rows bigint not null, seconds double not null,
    finished_at timestamp not null
);
insert into raw.forecast_partitions values
    ('old', 'old', 'r0', 'arima', 'AAPL', 'P0', 5, 10, 0.1, now()::timestamp);
"""


def _dates(n: int) -> np.ndarray:
    return pd.date_range("2020-01-01", periods=n, freq="B").values


def _quantile_forecasts(n: int, fallbacks=()) -> QuantileForecasts:
    point = np.arange(n * 2, dtype=float).reshape(n, 2) + 100
    spread = np.linspace(-1, 1, len(QUANTILE_LEVELS))
    return QuantileForecasts(point, point[:, :, None] + spread, tuple(fallbacks))


def test_an_older_warehouse_keeps_its_partitions_and_reads_their_count_as_unknown():
    con = duckdb.connect(":memory:")
    con.execute(OLD_PARTITIONS_DDL)
    create_raw_tables(con)
    create_raw_tables(con)  # idempotent
    assert con.execute(
        "select partition_key, n_fallback_windows from raw.forecast_partitions"
    ).fetchall() == [("old", None)]
    fallbacks = (WindowFallback(2, "fit failed"),)
    store_partition(
        con,
        "r1",
        Partition("arima", "AAPL", "P0", "new"),
        "new",
        _dates(4),
        _quantile_forecasts(4, fallbacks),
        0.2,
    )
    assert con.execute(
        "select partition_key, n_fallback_windows from raw.forecast_partitions order by 1"
    ).fetchall() == [("new", 1), ("old", None)]
    assert con.execute("select window_end_date, reason from raw.forecast_fallbacks").fetchall() == [(pd.Timestamp(_dates(4)[2]).date(), "fit failed")]  # fmt: skip


def test_a_partition_that_cannot_say_records_an_unknown_count_and_others_zero():
    con = duckdb.connect(":memory:")
    create_raw_tables(con)
    imported = Partition("mymodel", "AAPL", "P0", "imp")
    store_partition(
        con, "r1", imported, "imp", _dates(3), np.ones((3, 2)), 0.0, fallbacks_known=False
    )
    store_partition(
        con, "r1", Partition("naive", "AAPL", "P0", "nv"), "nv", _dates(3), np.ones((3, 2)), 0.0
    )
    store_partition(
        con,
        "r1",
        Partition("arima", "AAPL", "P0", "ar"),
        "ar",
        _dates(3),
        _quantile_forecasts(3),
        0.0,
    )
    counts = con.execute(
        "select partition_key, n_fallback_windows from raw.forecast_partitions order by 1"
    ).fetchall()
    assert counts == [("ar", 0), ("imp", None), ("nv", 0)]  # fmt: skip


def test_a_failed_window_is_not_also_recorded_as_a_fallback():
    con = duckdb.connect(":memory:")
    create_raw_tables(con)
    point = PartialForecasts(
        np.array([[1.0, 1.0], [np.nan, np.nan], [2.0, 2.0]]), (WindowFailure(1, "bad", "?"),)
    )
    forecasts = QuantileForecasts(
        point,
        np.full((3, 2, len(QUANTILE_LEVELS)), np.nan),
        (WindowFallback(1, "x"), WindowFallback(2, "y")),
    )
    finished = FinishedPartition(
        Partition("arima", "AAPL", "P0", "k"), "k", _dates(3), forecasts, 0.1
    )
    store_partitions(con, "r1", [finished])
    assert con.execute("select reason from raw.forecast_fallbacks").fetchall() == [("y",)]
    assert con.execute("select n_fallback_windows from raw.forecast_partitions").fetchall() == [(1,)]  # fmt: skip


# -- the systems and the worker's checks -----------------------------------------------------


def _batch(contexts: list[list[float]], horizon: int = 2) -> ForecastBatch:
    contexts = np.asarray(contexts, dtype=float)
    n = len(contexts)
    return ForecastBatch("X", "P0", _dates(n).astype("datetime64[D]"), contexts, horizon, np.zeros((n, horizon)), (0.0, 1.0))  # fmt: skip


def test_fracast_returns_each_window_with_too_few_values_as_a_fallback_with_its_reason():
    """Windows under fracast's 8 finite values never reach the model (no torch here)."""
    short = [
        [1.0] * (MIN_FINITE - 1) + [np.nan] * 2,
        [np.nan] * (MIN_FINITE - 3) + [3.0, 4.0, 5.0, np.nan],
    ]
    out = FracastSystem().predict_quantiles(_batch(short))
    assert [f.row for f in out.fallbacks] == [0, 1]
    assert out.fallbacks[1].reason == f"3 finite value(s), fracast needs at least {MIN_FINITE}"
    np.testing.assert_array_equal(out.point, [[1.0, 1.0], [5.0, 5.0]])


def test_arima_names_only_its_failed_windows_as_fallbacks():
    from tsrate.systems.arima import ArimaSystem

    contexts = [[101.0, 103.0, 102.0], [100.0, 104.0, 103.0], [101.0, np.nan, 102.0]]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ArimaSystem(ORDER).predict_quantiles(_batch(contexts))
    expected = [row for row, c in enumerate(contexts) if cold_fit_fails(np.asarray(c))]
    assert expected == [0, 1]
    assert [f.row for f in out.fallbacks] == expected


def test_fallbacks_must_name_distinct_windows_of_the_batch():
    batch = _batch([[1.0, 2.0, 3.0]] * 3)
    ordered = check_fallbacks("s", batch, (WindowFallback(2, "b"), WindowFallback(0, "a")))
    assert [f.row for f in ordered] == [0, 2]
    with pytest.raises(ForecastOutputError, match="reported as a fallback twice"):
        check_fallbacks("s", batch, (WindowFallback(1, "a"), WindowFallback(1, "b")))
    for row in (3, -1):
        with pytest.raises(ForecastOutputError, match="outside the batch"):
            check_fallbacks("s", batch, (WindowFallback(row, "a"),))


def test_a_partition_file_carries_the_fallback_windows(tmp_path):
    partition = Partition("arima", "AAPL", "P0", "key1")
    batch = _batch([[1.0, 2.0, 3.0]] * 4)
    forecasts = _quantile_forecasts(4, (WindowFallback(1, "fit failed"), WindowFallback(3, "z")))
    path = write_partition_file(tmp_path, partition, batch.window_end_dates, forecasts, 1.5)
    back, seconds = read_partition_file(path, partition, batch)
    assert back.fallbacks == forecasts.fallbacks and seconds == 1.5
    plain = dataclasses.replace(forecasts, fallbacks=())
    path = write_partition_file(tmp_path, partition, batch.window_end_dates, plain, 1.5)
    assert read_partition_file(path, partition, batch)[0].fallbacks == ()


def test_imported_predictions_record_an_unknown_fallback_count(warehouse, good, tmp_path):
    """tsrate cannot see whether an imported model fell back: its partitions read null."""
    counts = imported_partition_counts(warehouse, good, tmp_path, "n_fallback_windows")
    assert counts and counts == [(None,)] * len(counts)
