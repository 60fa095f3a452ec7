"""Forecast runs of the import study (tests/support/import_study.py) with the systems a test
names, for the tests of a study's later runs (a system rated from an earlier run, maybe
forecast on other prices). The forecasts run in this process (one worker); the dbt build
is the test's. No test here."""

from __future__ import annotations

from pathlib import Path

from tests.support.import_study import STUDY
from tsrate.config import Study, load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts


def study(systems: list[str]) -> Study:
    """The import study's tickers, dates, context and horizon, with ``systems``."""
    return Study.from_mapping(
        dict(
            study_tickers=list(STUDY.tickers),
            study_start=str(STUDY.start),
            study_end=str(STUDY.end),
            context_length=STUDY.context_length,
            horizon=STUDY.horizon,
            systems=systems,
        )
    )


def forecast(warehouse: Path, systems: list[str]) -> str:
    """A finished (``forecasted``) run of :func:`study` of ``systems``; its id."""
    with connect(warehouse) as con:
        run = run_forecasts(con, study(systems), load_companies(), workers=1,
                            progress=lambda _: None)  # fmt: skip
        finish_run(con, run.run_id, "forecasted")
    return run.run_id
