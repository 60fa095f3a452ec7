"""Copied windows in the marts: a real run of the naive baseline and seasonal naive (whose
forecast, at a horizon of 3, is a stretch of its context: the study of
tests/unit/test_s31_copies_warehouse.py), dbt building marts.forecast_failures_summary (and
its unit tests, stg_forecast_copies' too) in a child process.

Rules: n_copied_windows per system and perturbation equals the windows whose stored forecast
repeats a stretch of their stored context, counted by plain loops from raw.perturbed_inputs
and raw.forecasts; copied_share is that over n_windows; naive shows 0 (its last value
repeated is no copy on real prices); a cell with a partition whose count is null (stored
before copies were counted, as the migration leaves it) shows null, not a partial sum.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests.support.warehouses import ingest, read
from tests.unit.test_s31_copies_warehouse import _is_copy, _stored_windows, study
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow


def test_the_summary_mart_counts_the_windows_that_copy_their_context(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    with connect(warehouse) as con:
        summary = run_forecasts(con, study(), load_companies(), workers=1, progress=print)
        finish_run(con, summary.run_id, "forecasted")
        # naive's JPM P3 partition as one stored before copies were counted
        con.execute(
            "update raw.forecast_partitions set n_copied_windows = null "
            "where system_id = 'naive' and ticker = 'JPM' and perturbation_id = 'P3'"
        )
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select="+forecast_failures_summary",
    )
    windows = _stored_windows(warehouse)
    windows["copy"] = [
        _is_copy(c, f) for c, f in zip(windows.context, windows.forecast, strict=True)
    ]
    cells = windows.groupby(["system_id", "perturbation_id"])["copy"].agg(["sum", "size"])
    assert cells.loc[("seasonal_naive", "P0"), "sum"] > 0

    mart = read(warehouse, "select * from marts.forecast_failures_summary").set_index(
        ["system_id", "perturbation_id"]
    )
    assert len(mart) == 6
    for perturbation in ("P0", "P1", "P3"):
        seasonal = mart.loc[("seasonal_naive", perturbation)]
        expected = cells.loc[("seasonal_naive", perturbation)]
        assert seasonal["n_windows"] == expected["size"]
        assert seasonal["n_copied_windows"] == expected["sum"]
        assert seasonal["copied_share"] == pytest.approx(expected["sum"] / expected["size"])
    for perturbation in ("P0", "P1"):
        assert mart.loc[("naive", perturbation), "n_copied_windows"] == 0
        assert mart.loc[("naive", perturbation), "copied_share"] == 0
    assert pd.isna(mart.loc[("naive", "P3"), "n_copied_windows"])
    assert pd.isna(mart.loc[("naive", "P3"), "copied_share"])
    # the copies are scored as forecasts: nothing is excluded or counted as failed for them
    assert (mart["n_failed_windows"] == 0).all() and (mart["n_windows_excluded"] == 0).all()
