"""``tsrate studies`` lists the systems a study has forecasts of, not the ones its runs
skipped.

A run records every system its study names in ``raw.runs.systems``, the ones it could not
run too (a model without its weights or endpoint: ``raw.run_skipped_systems``). The study
listing took that list as the study's systems, so a skipped model read as part of the study
("systems: gemini_numeric, naive") though no forecast of it exists and the marts rate none.
Real runs of the import study (the bundled AAPL and JPM prices); ``gemini_numeric`` is
skipped for want of an API key.
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.support.import_study import STUDY
from tsrate.config import load_companies
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts
from tsrate.robustness.studies import describe_studies, list_studies


@pytest.fixture
def no_gemini(monkeypatch):
    for name in ("GEMINI_API_KEY", "TSRATE_GEMINI_NUMERIC_API_KEY_ENV"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("TSRATE_GEMINI_NUMERIC_BASE_URL", raising=False)


def test_a_skipped_system_is_not_a_system_of_the_study(warehouse, no_gemini) -> None:
    study = dataclasses.replace(STUDY, systems=("naive", "gemini_numeric"))
    with connect(warehouse) as con:
        summary = run_forecasts(con, study, load_companies(), run_id="reviewB-skip", workers=1)
        assert set(summary.skipped_systems) == {"gemini_numeric"}  # the premise
        finish_run(con, summary.run_id, "forecasted")
        (listed,) = [s for s in list_studies(con) if s["n_runs"] >= 1]
        assert listed["systems"] == ["naive"]
        lines = describe_studies(con)
        (at,) = [i for i, line in enumerate(lines) if "1 run," in line]
        assert lines[at + 2] == "  systems: naive"
