"""Fallback windows in the marts: a real ARIMA run where some fits fail (the study of
tests/support/fallback_study.py, on two tickers), dbt building
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

from tests.integration.builds import failures_summary_built
from tests.support.fallback_study import cold_fit_fails, stored_contexts, study
from tests.support.warehouses import read

pytestmark = pytest.mark.slow


def test_the_summary_mart_counts_the_windows_that_fell_back(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        failures_summary_built(warehouse, study(("AAPL", "JPM")), dbt_target, "n_fallback_windows")
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
