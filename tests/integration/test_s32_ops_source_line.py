"""The line ``tsrate run`` ends with for a system rated from forecasts made on other prices,
read from a real build's ``marts.run_provenance``: real forecasts (naive, random), one
stored AAPL close revised between the runs, a real dbt build (as
tests/integration/test_s31_source_prices.py builds it)."""

from __future__ import annotations

import pytest

from tests.support.import_study import STUDY
from tests.support.source_runs import forecast
from tests.support.warehouses import ingest
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.summary import source_change_line

pytestmark = pytest.mark.slow


def test_a_built_run_names_the_system_forecast_on_other_prices(tmp_path, dbt_target):
    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, list(STUDY.tickers))
    first = forecast(warehouse, ["naive", "random"])
    with connect(warehouse) as con:
        day = con.execute(
            "select min(price_date) from raw.perturbed_inputs where run_id = ? and ticker = 'AAPL'",
            [first],
        ).fetchone()[0]
        con.execute(
            "update raw.prices set close = close * 1.01 where ticker = 'AAPL' and price_date = ?",
            [day],
        )
    later = forecast(warehouse, ["naive"])  # random stays rated from the first run
    dbt.build(warehouse=warehouse, target_path=dbt_target, on_line=lambda _: None,
              select="+run_provenance")  # fmt: skip
    with connect(warehouse, read_only=True) as con:
        line = source_change_line(con, later)
        changed, reason = con.execute(
            "select source_days_changed, source_inputs_reason from marts.run_provenance "
            "where run_id = ? and system_id = 'random'",
            [later],
        ).fetchone()
    assert changed >= 1  # the revised AAPL day
    assert line.startswith(
        f"rated from forecasts made on other prices: random ({changed} ticker-day(s) changed "
        f"since run {first} forecast it); "
    )
    assert "naive" not in line  # forecast again on the revised prices
    # the mart's hint, for the systems named
    hint = "tsrate run --systems random (an imported model: tsrate export-inputs, then "
    assert hint in line and hint in reason
