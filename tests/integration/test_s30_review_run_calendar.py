"""A run's horizon steps stay on the trading days the run forecast, whatever the price
history gained since (a real warehouse, a real forecast, real dbt builds).

``tsrate ingest`` merges a file's new dates into the stored history (no ``--replace``
needed): a day the earlier source lacked is added inside the history. The marts of a run
made before must still score horizon step h against the h-th trading day after the origin
*in the series the run forecast* (its ``raw.windows.horizon_end_date`` for the last step),
not against whatever day now sits h places later in raw.prices.

Expected values by hand: Biased forecasts the clean future plus its company's offset
(seeds/companies.csv: AAPL 0, JPM 500), so every residual of every step is exactly that
offset, and the last step's target is the window's stored horizon_end_date.
"""

from __future__ import annotations

import datetime as dt

import pytest

from tests.integration.builds import forecast_and_build
from tests.support.warehouses import (
    ERROR_MARTS,
    merge_day,
    read,
    small_study,
    warehouse_lacking_a_day,
)
from tsrate.platform import dbt_runner as dbt

pytestmark = pytest.mark.slow

#: a trading day inside every window span of AAPL's study below
MISSING_DAY = dt.date(2022, 11, 15)
OFFSETS = {"AAPL": 0.0, "JPM": 500.0}


def test_a_day_merged_into_the_history_later_leaves_the_runs_horizon_steps_in_place(
    tmp_path, dbt_target
):
    # the first source lacked one of AAPL's days
    warehouse, day = warehouse_lacking_a_day(tmp_path, ["AAPL", "JPM"], MISSING_DAY)
    study = small_study(
        study_tickers=["AAPL", "JPM"],
        study_start="2022-09-01",
        study_end="2022-12-28",
        context_length=20,
        horizon=5,
        perturbations=["P0", "P1"],
        systems=["biased"],
    )
    run_id = forecast_and_build(warehouse, study, dbt_target, select=ERROR_MARTS)
    before = read(warehouse, "select * from marts.window_errors order by all")
    # a later file holds the day: merged (not --replace), nothing stored is dropped or changed
    merge_day(warehouse, day)
    dbt.build(
        run_id=run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select=ERROR_MARTS,
    )
    after = read(warehouse, "select * from marts.window_errors order by all")
    assert len(after) == len(before) > 0
    for frame in (before, after):
        expected = frame["ticker"].map(OFFSETS)
        assert (frame["max_abs_residual"] - expected).abs().max() < 1e-9
        assert (frame["n_steps"] == 5).all()
    # the last step's target is the stored window's horizon end, the first the day after
    # the origin in the run's own series
    targets = read(
        warehouse,
        "select s.ticker, s.window_end_date, s.horizon_step, s.target_date, w.horizon_end_date "
        "from intermediate.int_forecasts_scored s join raw.windows w "
        "on w.run_id = s.run_id and w.ticker = s.ticker and w.window_end_date = s.window_end_date "
        "where s.horizon_step = 5",
    )
    assert len(targets) > 0
    assert (targets["target_date"] == targets["horizon_end_date"]).all()
