"""Fallback windows in the marts: a real ARIMA run where some fits fail (the study of
tests/unit/test_fallback_windows.py, on two tickers), dbt building
marts.forecast_failures_summary (and its unit tests) in a child process.

Rules: n_fallback_windows per system and perturbation equals the windows whose fit fails,
found by statsmodels alone from the stored inputs; fallback_share is that over n_windows; a
system without a fallback shows 0; a cell with a partition stored before fallbacks were
recorded (its count null, as the migration leaves it) shows null, not 0.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tests.support.warehouses import ingest, read, small_study
from tests.unit.test_fallback_windows import (
    CONTEXT,
    HORIZON,
    ORDER,
    cold_fit_fails,
    stored_contexts,
)
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow


def test_the_summary_mart_counts_the_windows_that_fell_back(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    study = small_study(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-10-03",
        study_end="2022-10-21",
        context_length=CONTEXT,
        horizon=HORIZON,
        perturbations=["P0", "P3"],
        systems=["arima", "naive"],
        arima_order=list(ORDER),
    )
    with connect(warehouse) as con, np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary = run_forecasts(con, study, load_companies(), workers=1, progress=print)
        finish_run(con, summary.run_id, "forecasted")
        # naive's JPM P3 partition as one stored before fallbacks were recorded
        con.execute(
            "update raw.forecast_partitions set n_fallback_windows = null "
            "where system_id = 'naive' and ticker = 'JPM' and perturbation_id = 'P3'"
        )
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select="+forecast_failures_summary",
    )
    contexts = stored_contexts(warehouse)
    contexts["fails"] = [cold_fit_fails(c) for c in contexts["context"]]
    windows = contexts.groupby("perturbation_id").size()
    fails = contexts.groupby("perturbation_id")["fails"].sum()
    assert fails["P0"] > 0  # the study makes some fits fail

    mart = read(warehouse, "select * from marts.forecast_failures_summary").set_index(
        ["system_id", "perturbation_id"]
    )
    assert len(mart) == 4
    for perturbation in ("P0", "P3"):
        arima = mart.loc[("arima", perturbation)]
        assert arima["n_windows"] == windows[perturbation]
        assert arima["n_fallback_windows"] == fails[perturbation]
        assert arima["fallback_share"] == pytest.approx(fails[perturbation] / windows[perturbation])
    assert mart.loc[("naive", "P0"), "n_fallback_windows"] == 0
    assert mart.loc[("naive", "P0"), "fallback_share"] == 0
    assert pd.isna(mart.loc[("naive", "P3"), "n_fallback_windows"])
    assert pd.isna(mart.loc[("naive", "P3"), "fallback_share"])

    listed = read(
        warehouse,
        "select ticker, perturbation_id, count(*) n from staging.stg_forecast_fallbacks group by all",
    )
    assert listed["n"].sum() == fails.sum()
