"""Fixtures the integration tests share: warehouses built once per session and only read."""

from __future__ import annotations

import pytest

from tests.support.warehouses import (
    QUANTILE_MARTS,
    QUANTILE_STUDY,
    BuiltRun,
    ingest,
    small_study,
)
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts


@pytest.fixture(scope="session")
def quantile_run(tmp_path_factory, dbt_target) -> BuiltRun:
    """The quantile study (:data:`tests.support.warehouses.QUANTILE_STUDY`) forecasted and
    built once for the session: the probabilistic marts, the ratings with the uncertainty
    outcomes, the leaderboard, provenance and leakage. ``biased`` has no quantile forecasts
    (its stored quantiles are deleted before the build). Read-only for the tests: a test
    that writes works on a copy of the file."""
    warehouse = tmp_path_factory.mktemp("quantile_run") / "tsrate.duckdb"
    study = small_study(**QUANTILE_STUDY)
    ingest(warehouse, list(study.tickers))
    with connect(warehouse) as con:
        summary = run_forecasts(con, study, load_companies(), workers=1, progress=lambda m: None)
        finish_run(con, summary.run_id, "forecasted")
        con.execute("delete from raw.forecast_quantiles where system_id = 'biased'")
    dbt.build(
        run_id=summary.run_id,
        warehouse=warehouse,
        target_path=dbt_target,
        on_line=lambda line: None,
        select=QUANTILE_MARTS,
    )
    return BuiltRun(warehouse, summary.run_id, study)
