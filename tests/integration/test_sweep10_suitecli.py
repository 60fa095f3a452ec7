"""The suites' command lines through real runs, and the end of a suite run (build, publish,
report) through one real build, against the small errors a mutation sweep plants in them
(round 10; survivors: tests/planted/sweep10_suitecli.json; the parsers, one-line errors and
in-process helpers: tests/unit/test_sweep10_suitecli.py).

Each suite's ``run`` is called as a user types it (``tsrate.cli.main``, flows in-process on
a warehouse of the test's own, the smallest configuration): with ``--no-build`` the run
exits 0, stores the reference systems' answers (or its trained model) and stops at its
ready status, with no build and no marts, and its last line says so and names the
``tsrate suite <name> build`` command that builds it; interpretability's ``--no-sensitivity`` plans no
sensitivity variant (dataset 2, which has some). Then ``finish_suite`` builds that reasoning run (one dbt build), and
says where dbt's full log is (on the caller's line callback, when not verbose), writes the
report to its default place beside the warehouse, and ``tsrate suite reasoning report``
rewrites it from the snapshot with exit status 0.

Last, ``tsrate build`` of a run whose build fails (a forecast row stored twice: the grain
test fails) records the run ``build_failed`` with the last 2,000 characters of the error
(a warehouse in a deep folder makes the error, which ends with the log's path, longer).
"""

from __future__ import annotations

import pytest

from tests.support.warehouses import rows as _rows
from tsrate import cli
from tsrate.platform import dbt_runner
from tsrate.suites.publishing import finish_suite

pytestmark = pytest.mark.slow


@pytest.fixture
def warehouse(tmp_path, monkeypatch, dbt_target):
    """Flows run as plain functions on ``tmp_path/tsrate.duckdb``; builds use the session's
    dbt target; dbt's log is not streamed (``--verbose`` off)."""
    path = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_PREFECT", "never")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    monkeypatch.delenv("TSRATE_VERBOSE", raising=False)
    return path


def _marts(warehouse) -> list[str]:  # noqa: ANN001
    return [r[0] for r in _rows(warehouse, "select table_name from duckdb_tables() "
                                "where schema_name = 'marts'")]  # fmt: skip


def test_understanding_run_stores_the_references_answers_without_a_build(warehouse, capsys):
    argv = ["suite", "understanding", "run", "--datasets", "trend", "--test-size", "1"]
    assert cli.main([*argv, "--tasks", "detection", "--no-build"]) == 0
    ((suite_run_id, status),) = _rows(warehouse, "select suite_run_id, status from raw.suite_runs")
    assert status == "answered"
    assert (
        f"suite run {suite_run_id} stored, not built (--no-build): the marts, `tsrate query` "
        "and the report still show the last build. Build this run with: tsrate suite "
        f"understanding build {suite_run_id}"
    ) in capsys.readouterr().out
    systems = _rows(warehouse, "select distinct system_id from raw.und_responses order by 1")
    assert systems == [("und_analyst",), ("und_random",)]
    assert _marts(warehouse) == []


def test_reasoning_run_then_its_build_publish_and_report(warehouse, dbt_target, capsys):
    argv = ["suite", "reasoning", "run", "--scenarios", "4", "--forecasts", "2", "--fracast"]
    assert cli.main([*argv, "0", "--tasks", "qa_single", "--no-build"]) == 0
    ((suite_run_id, status),) = _rows(warehouse, "select suite_run_id, status from raw.suite_runs")
    assert status == "answered"
    assert f"Build this run with: tsrate suite reasoning build {suite_run_id}" in (
        capsys.readouterr().out
    )
    assert _rows(warehouse, "select distinct system_id from raw.rsn_responses") == [("random",)]
    assert _marts(warehouse) == []

    lines: list[str] = []
    report = finish_suite("reasoning", suite_run_id, warehouse, lines.append, str(dbt_target))
    (log_file,) = dbt_runner.log_folder(warehouse).glob(f"dbt-build-{suite_run_id}-*.log")
    assert f"full dbt log: {log_file}" in lines
    assert log_file.exists() and "full dbt log" not in capsys.readouterr().out
    assert report == warehouse.parent / "reports" / "reasoning.html" and report.exists()
    assert _rows(warehouse, "select status from raw.suite_runs") == [("succeeded",)]

    report.unlink()
    assert cli.main(["suite", "reasoning", "report"]) == 0
    assert suite_run_id in report.read_text()
    other = warehouse.parent / "elsewhere.html"
    assert cli.main(["suite", "reasoning", "report", "--output", str(other)]) == 0
    assert f"reasoning report written to {other}" in capsys.readouterr().out


def test_a_failed_build_keeps_the_last_2000_characters_of_its_error(tmp_path, monkeypatch):
    from tsrate.config import Study, load_companies
    from tsrate.platform.warehouse import connect, store_prices
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts
    from tsrate.robustness.sources import load_skfolio_sp500

    folder = tmp_path
    for letter in "abcdefghij":
        folder = folder / (letter * 200)  # about 2,000 characters of folders
    warehouse = folder / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    study = Study.from_mapping(
        dict(study_tickers="AAPL", study_start="2022-09-01", study_end="2022-11-30",
             context_length=30, horizon=5, systems="naive", perturbations="P0")
    )  # fmt: skip
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["AAPL"]), "skfolio")
        run_id = run_forecasts(con, study, load_companies(), workers=1).run_id
        finish_run(con, run_id, "forecasted")
        con.execute("insert into raw.forecasts select * from raw.forecasts limit 1")
    args = cli.build_parser().parse_args(["build"])
    with pytest.raises(dbt_runner.DbtError) as caught:
        args.func(args)
    error = str(caught.value)
    assert len(error) > 2100
    ((status, message),) = _rows(
        warehouse, f"select status, message from raw.runs where run_id = '{run_id}'"
    )
    assert status == "build_failed"
    assert message == error[len(error) - 2000 :] and len(message) == 2000


def test_interpretability_run_without_sensitivity_trains_one_unit(warehouse, capsys):
    """Without the sensitivity grid, dataset 2 is one variant (d2) and one model one unit."""
    # dataset 2 has sensitivity variants (the f and sigma grids), so --no-sensitivity shows
    argv = ["suite", "interpretability", "run", "--datasets", "2", "--models", "tcdf"]
    argv += ["--seeds", "1", "--no-sensitivity", "--no-build", "--workers", "1"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "stored, not built (--no-build)" in out and "done. Try" not in out
    assert "tsrate suite interpretability build interp-" in out
    assert _rows(warehouse, "select suite, status from raw.suite_runs") == [
        ("interpretability", "trained")
    ]
    assert _rows(warehouse, "select count(*) from raw.interp_suite_run_variants") == [(1,)]
    assert _rows(warehouse, "select count(*) from raw.interp_suite_run_units") == [(1,)]
    assert _marts(warehouse) == []
