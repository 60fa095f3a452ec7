"""``tsrate run``'s full build leaves dbt's unit tests to ``tsrate build`` and CI (dbt Labs'
advice: unit tests check the SQL on fixed inputs, so they belong to development and CI, not
to every production build); ``tsrate build``'s build in the same target folder then runs
them. Real forecasts, real dbt builds."""

from __future__ import annotations

import json

import pytest

from tests.support.warehouses import ingest, small_study
from tsrate.config import load_companies
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.dbt_child import BUILD_RESULTS, UNIT_TEST_PASS
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import finish_run, run_forecasts

pytestmark = pytest.mark.slow


def test_a_runs_build_leaves_the_unit_tests_and_tsrate_build_runs_them(
    tmp_path, parsed_target, monkeypatch
):
    monkeypatch.delenv("TSRATE_ALWAYS_UNIT_TESTS", raising=False)
    warehouse, target = tmp_path / "tsrate.duckdb", parsed_target()
    ingest(warehouse, ["AAPL"])
    with connect(warehouse) as con:
        summary = run_forecasts(con, small_study(study_tickers=["AAPL"], systems=["naive"]),
                                load_companies(), workers=1, progress=lambda _: None)  # fmt: skip
        finish_run(con, summary.run_id, "forecasted")

    def unit_results() -> list[str]:
        results = json.loads((target / BUILD_RESULTS).read_text())["results"]
        return [r["unique_id"] for r in results if r["unique_id"].startswith("unit_test.")]

    lines: list[str] = []
    dbt.build(summary.run_id, warehouse, lines.append, None, target, unit_tests=False)
    assert any("the dbt unit tests were not run: tsrate run leaves them" in x for x in lines)
    assert any(x.startswith("models and seeds in ") for x in lines), lines
    assert unit_results() == [] and not (target / UNIT_TEST_PASS).exists()
    assert any(x.startswith("data tests: ") for x in lines), lines  # the data tests ran

    lines.clear()
    dbt.build(summary.run_id, warehouse, lines.append, None, target)  # as tsrate build
    assert not any("were not run" in x or "not re-run" in x for x in lines), lines
    assert len(unit_results()) >= 10 and (target / UNIT_TEST_PASS).exists()
