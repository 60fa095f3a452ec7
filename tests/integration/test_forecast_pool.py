"""The forecast worker pool keeps only a few partitions in flight, and forecasts exactly what
one process does (moved from the unit tests: the pool starts worker processes)."""

from __future__ import annotations

import numpy as np

from tests.support.warehouses import ingest, small_study
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast import execute as forecasting
from tsrate.robustness.forecast.execute import run_forecasts


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
    assert len(results[0]) > 0
    np.testing.assert_array_equal(results[0].to_numpy(), results[1].to_numpy())
