"""Where forecasts are computed and how they travel, without starting a process: the
workers' environment and start method, the systems' modules, whether a run computes
everything (tsrate.robustness.forecast.workers), and the Dask path's partition files, read
back with pyarrow alone, and its address and cluster settings
(tsrate.robustness.forecast.distributed).

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_forecast.json): a forecast stored under the wrong window or step in a
partition file, a file reused or recomputed wrongly, or a setting that reaches the workers
wrongly changes a checked value. The pool and the fork server themselves start processes:
tests/integration/test_forecast_pool.py, test_forecast_workers.py and
test_sweep9_forecast.py.
"""

from __future__ import annotations

import json
import os

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from tsrate.config import Study, load_companies
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.robustness.forecast import distributed, workers
from tsrate.robustness.forecast.plan import Partition
from tsrate.systems.base import ForecastBatch, QuantileForecasts
from tsrate.systems.failures import PartialForecasts, WindowFailure

# --- workers.py -----------------------------------------------------------------------------


def test_environment_sets_for_the_block_then_restores_each_variable(monkeypatch) -> None:
    monkeypatch.setenv("TSRATE_SWEEP9_SET", "before")
    monkeypatch.delenv("TSRATE_SWEEP9_UNSET", raising=False)
    with workers.environment(TSRATE_SWEEP9_SET="in", TSRATE_SWEEP9_UNSET="in too"):
        assert os.environ["TSRATE_SWEEP9_SET"] == "in"
        assert os.environ["TSRATE_SWEEP9_UNSET"] == "in too"
    assert os.environ["TSRATE_SWEEP9_SET"] == "before"
    assert "TSRATE_SWEEP9_UNSET" not in os.environ
    for name in workers.THREAD_VARIABLES:
        monkeypatch.setenv(name, "8")
    with workers.single_threaded_children():
        assert [os.environ[n] for n in workers.THREAD_VARIABLES] == ["1", "1", "1"]
    assert [os.environ[n] for n in workers.THREAD_VARIABLES] == ["8", "8", "8"]


@pytest.mark.parametrize(
    ("wanted", "method"),
    [("", "forkserver"), (" SPAWN ", "spawn"), ("spawn", "spawn"), ("fork", "forkserver")],
)
def test_the_start_method_is_a_fork_server_unless_spawn_is_asked_for(
    monkeypatch, wanted, method
) -> None:
    # Linux has a fork server; TSRATE_WORKER_START=spawn (any case, spaces) asks for spawn
    monkeypatch.setenv(workers.START_METHOD, wanted)
    assert workers.start_method() == method


def test_system_modules_are_the_seeds_modules_without_their_variants() -> None:
    ids = ["phi3_numeric", "arima", "gemini_numeric", "naive", "no_such_system", "arima"]
    assert workers.system_modules(ids) == [
        "tsrate.systems.arima",
        "tsrate.systems.llm",
        "tsrate.systems.naive",
    ]
    assert workers.system_modules([]) == []


def test_a_run_computes_everything_when_forced_or_when_no_partition_is_stored(tmp_path) -> None:
    new = tmp_path / "new.duckdb"
    assert workers.computes_everything(new, force=False)
    assert workers.computes_everything(new, force=True)
    empty = tmp_path / "empty.duckdb"
    with duckdb.connect(str(empty)) as con:
        create_raw_tables(con)
    assert workers.computes_everything(empty, force=False)
    stored = tmp_path / "stored.duckdb"
    with duckdb.connect(str(stored)) as con:
        create_raw_tables(con)
        con.execute(
            "insert into raw.forecast_partitions values "
            "('k', 'k', 'r', 'naive', 'AAPL', 'P0', 1, 1, 0.1, now()::timestamp, 0, null)"
        )
    assert not workers.computes_everything(stored, force=False)
    assert workers.computes_everything(stored, force=True)


# --- distributed.py -------------------------------------------------------------------------


def test_the_dask_address_is_the_first_non_blank_of_flag_environment_and_var(
    monkeypatch,
) -> None:
    monkeypatch.setenv(distributed.DASK_ADDRESS, "  tcp://env:8786 ")
    assert distributed.resolve_dask_address(" local:2 ") == "local:2"
    assert distributed.resolve_dask_address("   ") == "tcp://env:8786"  # a blank flag
    monkeypatch.setenv(distributed.DASK_ADDRESS, " ")
    assert distributed.resolve_dask_address(None) is None  # the var is "" in dbt_project.yml


def test_a_local_dask_cluster_has_one_single_threaded_process_per_worker(monkeypatch) -> None:
    pytest.importorskip("prefect_dask")
    local = distributed.dask_task_runner("local:3")
    assert local.cluster_kwargs == {
        "n_workers": 3,
        "threads_per_worker": 1,
        "processes": True,
        "dashboard_address": None,
        "env": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    }
    assert local.address is None
    assert distributed.dask_task_runner("local").cluster_kwargs["n_workers"] == os.cpu_count()
    assert distributed.dask_task_runner("local:").cluster_kwargs["n_workers"] == os.cpu_count()
    monkeypatch.setattr(distributed.os, "cpu_count", lambda: None)  # the count is unknown
    assert distributed.dask_task_runner("local").cluster_kwargs["n_workers"] == 1
    remote = distributed.dask_task_runner("tcp://host:8786")
    assert remote.address == "tcp://host:8786" and remote.cluster_kwargs in (None, {})
    with pytest.raises(Exception, match="use tcp://host:8786"):
        distributed.dask_task_runner("localhost:8786")


def test_partition_files_live_beside_the_warehouse_unless_told_otherwise(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.delenv(distributed.PARTITION_DIR, raising=False)
    warehouse = tmp_path / "w" / "tsrate.duckdb"
    assert distributed.partition_folder(warehouse) == tmp_path.resolve() / "w" / "partitions"
    monkeypatch.setenv(distributed.PARTITION_DIR, str(tmp_path / "shared"))
    assert distributed.partition_folder(warehouse) == tmp_path / "shared"
    assert distributed.partition_file(tmp_path, "abc") == tmp_path / "abc.parquet"


def _batch(n_windows: int = 3, horizon: int = 2) -> ForecastBatch:
    dates = np.arange("2022-10-03", "2022-10-20", dtype="datetime64[D]")[:n_windows]
    return ForecastBatch(
        ticker="AAPL",
        perturbation_id="P1",
        window_end_dates=dates,
        contexts=np.ones((n_windows, 4)),
        horizon=horizon,
        clean_futures=np.ones((n_windows, horizon)),
        study_range=(1.0, 2.0),
    )


def test_a_partition_file_holds_each_window_and_step_and_its_quantiles(tmp_path) -> None:
    partition = Partition("naive", "AAPL", "P1", "key1")
    batch = _batch(3, 2)
    point = PartialForecasts(
        np.array([[1.0, 2.0], [np.nan, np.nan], [5.0, 6.0]]), (WindowFailure(1, "bad", "?"),)
    )
    quantiles = np.arange(3 * 2 * 9, dtype=float).reshape(3, 2, 9)
    folder = tmp_path / "a" / "b"  # made, parents too; written twice into it
    distributed.write_partition_file(folder, partition, batch.window_end_dates, np.ones((3, 2)), 1)
    path = distributed.write_partition_file(
        folder, partition, batch.window_end_dates, QuantileForecasts(point, quantiles), 2.5
    )
    assert sorted(p.name for p in folder.iterdir()) == ["key1.parquet"]
    table = pq.read_table(path)
    rows = table.to_pylist()
    dates = [d.item() for d in batch.window_end_dates]
    assert [(r["window_end_date"], r["horizon_step"]) for r in rows] == [
        (dates[w], step) for w in range(3) for step in (1, 2)
    ]
    np.testing.assert_array_equal([r["forecast"] for r in rows], [1, 2, np.nan, np.nan, 5, 6])
    for level in range(9):
        assert [r[f"quantile_{level}"] for r in rows] == quantiles[:, :, level].ravel().tolist()
    meta = json.loads(table.schema.metadata[b"tsrate.partition"])
    assert meta == {
        "input_key": "key1",
        "system_id": "naive",
        "ticker": "AAPL",
        "perturbation_id": "P1",
        "n_windows": 3,
        "horizon": 2,
        "seconds": 2.5,
        "failures": [{"row": 1, "reason": "bad", "raw_text": "?"}],
    }
    back, seconds = distributed.read_partition_file(path, partition, batch)
    assert seconds == 2.5
    assert isinstance(back, QuantileForecasts) and isinstance(back.point, PartialForecasts)
    np.testing.assert_array_equal(back.point.values, point.values)
    assert back.point.failures == point.failures
    np.testing.assert_array_equal(back.quantiles, quantiles)


def test_a_partition_file_of_ten_levels_reads_them_back_in_level_order(tmp_path) -> None:
    partition = Partition("naive", "AAPL", "P1", "key2")
    batch = _batch(2, 1)
    quantiles = np.arange(2 * 1 * 11, dtype=float).reshape(2, 1, 11)
    forecasts = QuantileForecasts(np.zeros((2, 1)), quantiles)
    path = distributed.write_partition_file(
        tmp_path, partition, batch.window_end_dates, forecasts, 0
    )
    back, _ = distributed.read_partition_file(path, partition, batch)
    np.testing.assert_array_equal(back.quantiles, quantiles)  # quantile_10 after quantile_9


def test_a_worker_keeps_a_partition_file_already_there_unless_told_not_to(tmp_path) -> None:
    study = Study.from_mapping(
        dict(
            study_tickers=["AAPL"],
            study_start="2022-01-03",
            study_end="2022-03-01",
            context_length=4,
            horizon=2,
            systems=["naive"],
            perturbations=["P0"],
        )
    )
    partition = Partition("naive", "AAPL", "P0", "key3")
    batch = ForecastBatch(
        ticker="AAPL",
        perturbation_id="P0",
        window_end_dates=_batch(2, 2).window_end_dates,
        contexts=np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 6.0]]),
        horizon=2,
        clean_futures=np.ones((2, 2)),
        study_range=(1.0, 6.0),
    )
    left = distributed.write_partition_file(
        tmp_path, partition, batch.window_end_dates, np.full((2, 2), 9.0), 123.0
    )
    args = (study.to_json(), load_companies(), partition, batch, str(tmp_path))
    assert distributed.forecast_partition_file(*args) == str(left)
    kept, seconds = distributed.read_partition_file(left, partition, batch)
    assert seconds == 123.0 and (kept == 9.0).all()  # a killed run's file, not recomputed
    distributed.forecast_partition_file(*args, reuse_file=False)
    fresh, seconds = distributed.read_partition_file(left, partition, batch)
    assert seconds != 123.0
    np.testing.assert_array_equal(fresh.point, [[4.0, 4.0], [6.0, 6.0]])  # naive: last value
    (tmp_path / "other").mkdir()
    made = distributed.forecast_partition_file(*args[:4], str(tmp_path / "other"))
    np.testing.assert_array_equal(
        distributed.read_partition_file(made, partition, batch)[0].point, [[4.0, 4.0], [6.0, 6.0]]
    )
