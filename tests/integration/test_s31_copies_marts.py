"""Copied windows in the marts: a real run of the naive baseline and seasonal naive (whose
forecast, at a horizon of 3, is a stretch of its context: the study of
tests/support/copy_study.py), dbt building marts.forecast_failures_summary (and
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

from tests.integration.builds import failures_summary_built
from tests.support.copy_study import is_copy, stored_windows, study
from tests.support.warehouses import read

pytestmark = pytest.mark.slow


def test_the_summary_mart_counts_the_windows_that_copy_their_context(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    failures_summary_built(warehouse, study(), dbt_target, "n_copied_windows")
    windows = stored_windows(warehouse)
    windows["copy"] = [
        is_copy(c, f) for c, f in zip(windows.context, windows.forecast, strict=True)
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
