"""The forecast worker pool keeps only a few partitions in flight, and forecasts exactly what
one process does (moved from the unit tests: the pool starts worker processes); a stopped
run's pool, its workers killed, does not keep the process from exiting."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import struct
import sys
import time

import numpy as np

from tests.support.warehouses import ingest, small_study
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast import execute as forecasting
from tsrate.robustness.forecast.execute import _kill_pool, run_forecasts


def study():
    return small_study(
        study_tickers=["AAPL", "JPM"], systems=["naive", "random", "biased"], horizon=5
    )


def stored_forecasts(con, run_id):
    return con.execute(
        "select p.system_id, p.ticker, p.perturbation_id, f.window_end_date, f.horizon_step, "
        "f.forecast from raw.forecasts f join raw.run_partitions r using (partition_key) "
        "join raw.forecast_partitions p using (partition_key) where r.run_id = ? order by all",
        [run_id],
    ).df()


def test_a_pool_with_one_partition_in_flight_per_worker_forecasts_like_one_process(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(forecasting, "IN_FLIGHT_PER_WORKER", 1)
    # results held until the last one (one commit for the rest of the run): nothing is lost
    monkeypatch.setattr(forecasting, "STORE_EVERY", 600.0)
    results = []
    for workers in (1, 2):
        path = tmp_path / f"w{workers}" / "tsrate.duckdb"
        ingest(path, ["AAPL", "JPM"])
        messages = []
        with connect(path) as con:
            summary = run_forecasts(
                con, study(), load_companies(), workers=workers, progress=messages.append
            )
            results.append(stored_forecasts(con, summary.run_id))
        assert summary.computed == 2 * 3 * 4  # tickers x systems x perturbations
        assert sum(m.startswith("[") for m in messages) == summary.computed
        # each system's forecast CPU time and its workers' setup are reported with the wall
        assert set(summary.per_system_cpu_seconds) == set(summary.per_system_seconds)
        assert set(summary.per_system_setup_seconds) == {"naive", "random", "biased"}
    assert len(results[0]) > 0
    np.testing.assert_array_equal(results[0].to_numpy(), results[1].to_numpy())


def _half_a_result(ready: str) -> None:
    """In a worker: write the first bytes of a result message into the pool's results pipe,
    as a worker killed while sending a large result leaves it, then wait to be killed."""
    frame = sys._getframe()
    while frame is not None and "result_queue" not in frame.f_locals:
        frame = frame.f_back
    assert frame is not None, "the pool's worker loop was not found"
    writer = frame.f_locals["result_queue"]._writer
    os.write(writer.fileno(), struct.pack("!i", 1_000_000) + b"partial")
    open(ready, "w").close()
    time.sleep(600)


def test_killing_a_worker_mid_result_does_not_hang_the_pool(tmp_path):
    ready = tmp_path / "ready"
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn")
    )
    manager = None
    try:
        pool.submit(_half_a_result, str(ready))
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert time.monotonic() < deadline, "the worker never wrote its half message"
            time.sleep(0.05)
        manager = pool._executor_manager_thread
        time.sleep(0.3)  # the manager thread reads the length and waits for the rest
        started = time.monotonic()
        _kill_pool(pool)
        # the interpreter's exit joins this thread: alive here means a run that never exits
        assert not manager.is_alive(), "the pool's manager thread still waits for the result"
        assert time.monotonic() - started < 10
    finally:
        if manager is not None and manager.is_alive():  # unblock it, or pytest would hang
            manager.result_queue._writer.close()


_SETUP_APART = """
import json, sys
from tests.support.warehouses import small_study
from tsrate.config import load_companies
from tsrate.robustness.forecast.execute import forecast_partition
from tsrate.systems.arima import ArimaSystem
from tsrate.systems.llm_prompts import sample_batch

SARIMAX = "statsmodels.tsa.statespace.sarimax"
before = SARIMAX in sys.modules
loaded_when_forecasting = []
quantiles = ArimaSystem.predict_quantiles


def recording(self, batch):
    loaded_when_forecasting.append(SARIMAX in sys.modules)
    return quantiles(self, batch)


ArimaSystem.predict_quantiles = recording
study = small_study(systems=["arima"], context_length=40, horizon=3).to_json()
batch = sample_batch(40, 3)
calls = []
for _ in range(2):
    _, seconds, cpu, setup = forecast_partition(study, load_companies(), "arima", batch)
    calls.append({"seconds": seconds, "cpu": cpu, "setup": setup})
print(json.dumps({"imported_before": before, "calls": calls, "loaded": loaded_when_forecasting}))
"""


def test_a_workers_setup_is_timed_apart_from_its_forecasts():
    """A fresh worker's first partition pays statsmodels' import in its setup
    (``warm_up``), not in the forecast seconds the run reports as model time: the import
    is done before the first forecast starts, the setup is timed once, and the system is
    kept for the next partition. (No comparison of measured seconds: they move with the
    machine's load.)"""
    from tests.integration.scripts import run_script

    report = run_script(_SETUP_APART)
    first, second = report["calls"]
    assert not report["imported_before"]
    assert report["loaded"] == [True, True]  # imported by warm_up, before forecasting
    assert first["setup"] > 0  # the import and the system, once
    assert second["setup"] == 0.0  # the system is kept for the next partition
    assert first["seconds"] > 0 and second["seconds"] > 0
    assert 0 < first["cpu"] <= first["seconds"] + 0.05
