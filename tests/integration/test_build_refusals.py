"""`tsrate build`'s refusals, through the CLI: no warehouse, a warehouse without a forecast
run, and runs whose forecasts are incomplete (the newest, or one named with --run-id) each
stop with one line naming the problem, and a finished run is then the one to build.

A build that gets past the warehouse's existence starts dbt's child ahead of choosing the
run (its parse overlaps the checks), so these tests start a process: they live here, not
with the study check's unit tests (tests/unit/test_study_check.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.study_inputs import SMALL, walk_prices
from tsrate.platform.warehouse import connect, store_prices


def _forecast_tiny_run(warehouse: Path, status: str) -> str:
    """A real (tiny) forecast run of the naive system, left with ``status``."""
    from tsrate.config import Study, load_companies
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts

    study = Study.from_mapping(
        {**SMALL, "study_start": "2022-10-01", "systems": "naive", "perturbations": "P0"}
    )
    with connect(warehouse) as con:
        store_prices(con, walk_prices("AAPL", "2022-06-01", 160), "test")
        store_prices(con, walk_prices("MSFT", "2022-06-01", 160), "test")
        run_id = run_forecasts(con, study, load_companies(), workers=1).run_id
        finish_run(con, run_id, status)
    return run_id


def _build(warehouse: Path, monkeypatch, capsys, *args: str) -> tuple[int, list[str]]:
    from tsrate import cli

    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    code = cli.main(["build", *args])
    return code, capsys.readouterr().err.splitlines()


def test_build_without_a_warehouse_or_a_forecast_run_refuses(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    code, err = _build(warehouse, monkeypatch, capsys)
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"tsrate: error: no warehouse at {warehouse}: nothing to build")
    assert not warehouse.exists()
    with connect(warehouse) as con:  # prices, but no run
        store_prices(con, walk_prices("AAPL", "2022-06-01", 60), "test")
    code, err = _build(warehouse, monkeypatch, capsys)
    assert code == 2
    assert err == [
        f"tsrate: error: no forecast run to build marts for in {warehouse}: `tsrate run` "
        "forecasts the study and builds, `tsrate import FILE --system ID` rates a model's "
        "predictions"
    ]


def test_build_refuses_runs_whose_forecasts_are_incomplete(tmp_path, monkeypatch, capsys):
    from tsrate.robustness.build_run import run_to_build

    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    run_id = _forecast_tiny_run(warehouse, "interrupted")
    code, err = _build(warehouse, monkeypatch, capsys)
    assert code == 2 and len(err) == 1
    assert f"(the newest, {run_id}, is 'interrupted')" in err[0]
    code, err = _build(warehouse, monkeypatch, capsys, "--run-id", run_id)
    assert code == 2 and len(err) == 1
    assert f"run {run_id!r} is 'interrupted': its forecasts are incomplete" in err[0]
    code, err = _build(warehouse, monkeypatch, capsys, "--run-id", "nope")
    assert err == ["tsrate: error: no run 'nope' in raw.runs; see `tsrate runs`"]
    with connect(warehouse) as con:
        from tsrate.robustness.forecast.execute import finish_run

        finish_run(con, run_id, "forecasted")
    assert run_to_build(warehouse) == run_id == run_to_build(warehouse, run_id)
