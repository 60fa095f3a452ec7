"""A new run id (core or suite), or another warehouse of the same file name, reaches dbt
without costing a re-parse; and the dbt child started ahead of a build.

tsrate passes the run the marts describe as env vars (``TSRATE_RUN_ID``,
``TSRATE_<PREFIX>_SUITE_RUN_ID``), read by the models only when they run: dbt's partial
parse then finds nothing changed between two builds of different runs. Checked with real
``dbt compile`` children on a temporary warehouse: the compiled SQL names each new run, and
dbt's own log of the second compile says it skipped parsing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tsrate.platform import dbt_runner as dbt
from tsrate.platform.warehouse import connect
from tsrate.suites import SUITES

pytestmark = pytest.mark.slow

MODELS = ["int_runs_selected", "int_und_suite_runs_selected"]


def _compile(warehouse: Path, target: Path, run_id: str, suite_run_id: str) -> tuple[str, str]:
    """Compile the two run-selecting models; return (their compiled SQL, dbt's log of it)."""
    log = target / "logs" / "dbt.log"
    if log.exists():
        log.unlink()
    env = {"TSRATE_RUN_ID": run_id, SUITES["understanding"].run_env: suite_run_id}
    env["DBT_LOG_LEVEL_FILE"] = "debug"  # the parse messages read below are debug lines
    dbt.run_dbt(["compile", "--select", *MODELS], None, warehouse, lambda _: None, target, env)
    compiled = target / "compiled" / "tsrate" / "models"
    sql = (compiled / "intermediate" / "int_runs_selected.sql").read_text() + (
        compiled / "understanding" / "intermediate" / "int_und_suite_runs_selected.sql"
    ).read_text()
    return sql, log.read_text()


def test_a_new_run_id_is_compiled_in_without_a_reparse(tmp_path, parsed_target):
    warehouse = tmp_path / "tsrate.duckdb"
    target = parsed_target()  # the session's parse: only the new run ids could cost one
    with connect(warehouse):
        pass
    first, _ = _compile(warehouse, target, "run-one", "und-one")
    assert "'run-one'" in first and "'und-one'" in first

    second, log = _compile(warehouse, target, "run-two", "und-two")
    assert "'run-two'" in second and "'und-two'" in second
    assert "run-one" not in second and "und-one" not in second
    assert "no changes found, skipping parsing" in log, log[-3000:]

    # 'latest' (what `tsrate build` of the newest run and plain dbt use): the newest
    # complete run, chosen in SQL
    latest, _ = _compile(warehouse, target, "latest", "")
    assert "row_number() over (order by started_at desc" in latest
    assert "run-two" not in latest and "und-two" not in latest


def test_two_warehouses_share_one_parse_and_each_build_writes_its_own_file(
    tmp_path, monkeypatch, parsed_target
):
    """dbt hashes the profile's path into its partial parse: the child runs in the
    warehouse's folder and the profile names the file alone, so a build of another
    warehouse of the same name into the same target folder skips the parse. The target
    starts from the session's parse, made for a warehouse of the same name in another
    folder: neither build here parses. Each build still reads and writes its own file: the
    staging view of each holds its own prices (the data tests ran on it), and the first
    file is untouched by the second build."""
    from tests.support.warehouses import ingest, read

    monkeypatch.setenv("DBT_LOG_LEVEL_FILE", "debug")  # "skipping parsing" is a debug line
    target = parsed_target()
    log = target / "logs" / "dbt.log"
    first, second = tmp_path / "a" / "tsrate.duckdb", tmp_path / "b" / "tsrate.duckdb"
    first.parent.mkdir()
    second.parent.mkdir()
    ingest(first, ["AAPL", "MSFT"])
    ingest(second, ["JPM"])
    lines: list[str] = []
    for warehouse in (first, second):
        dbt.build(
            warehouse=warehouse, on_line=lines.append, select="stg_prices", target_path=target
        )
        text = log.read_text()
        assert "no changes found, skipping parsing" in text, text[-3000:]
        assert "Unable to do partial parsing" not in text and "full parse" not in text, text[-3000:]
        log.unlink()
    assert any("PASS=" in line and "FAIL=0" in line for line in lines), lines

    def tickers(warehouse: Path) -> set[str]:
        return set(read(warehouse, "select distinct ticker from staging.stg_prices")["ticker"])

    assert tickers(first) == {"AAPL", "MSFT"}
    assert tickers(second) == {"JPM"}
    assert not (tmp_path / "tsrate.duckdb").exists() and not (target / "tsrate.duckdb").exists()


def test_a_child_started_ahead_compiles_the_data_tests_without_opening_the_live_file(
    tmp_path, parsed_target
):
    """While `tsrate run` forecasts, it holds the live warehouse open for writing; the dbt
    child started ahead compiles the data tests then (their first build has no cached SQL),
    against a throwaway file of the same name. Checked: the child compiles while this
    process holds a write connection (a DuckDB lock conflict would leave no compiled SQL),
    the build then uses that SQL and passes, and the SQL equals what a compile after the
    build against the live file writes."""
    import json
    import time

    from tests.support.warehouses import ERROR_MARTS, ingest, small_study
    from tsrate.config import load_companies
    from tsrate.platform.dbt_child import data_test_cache_file
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts

    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "MSFT"])
    study = small_study(study_tickers=["AAPL", "MSFT"], systems=["naive", "random"])
    ahead, after = parsed_target("ahead"), parsed_target("after")
    cache = data_test_cache_file(ERROR_MARTS)  # this selection's compiled tests
    with connect(warehouse) as con:  # the writer, as during a run's forecasts
        dbt.prepare_build(warehouse, ERROR_MARTS, ahead)
        summary = run_forecasts(con, study, load_companies(), progress=lambda message: None)
        finish_run(con, summary.run_id, "forecasted")
        deadline = time.monotonic() + 240
        while not (ahead / cache).exists() and time.monotonic() < deadline:
            con.execute("select count(*) from raw.forecasts").fetchone()  # still ours
            time.sleep(0.5)
        assert (ahead / cache).exists(), "the child compiled nothing while we wrote"
    lines: list[str] = []
    try:
        dbt.build(summary.run_id, warehouse, lines.append, ERROR_MARTS, ahead)
    finally:
        dbt.discard_prepared()
    assert any("compiled ahead" in line for line in lines), lines
    assert any("PASS=" in line and "FAIL=0" in line for line in lines), lines

    dbt.build(summary.run_id, warehouse, lines.append, ERROR_MARTS, after)  # compiled after
    compiled_ahead = json.loads((ahead / cache).read_text())["sql"]
    compiled_after = json.loads((after / cache).read_text())["sql"]
    assert compiled_ahead and compiled_ahead == compiled_after


def test_unit_tests_rerun_only_when_what_they_depend_on_changed(
    tmp_path, monkeypatch, parsed_target
):
    """A full build skips the unit tests when they passed in this target folder with the
    same models, fixtures, macros, column types and versions (they read no warehouse rows);
    a changed fixture makes the next build run them again, and a wrong expectation fails
    the build as it always did."""
    from tests.integration.builds import forecast_and_build
    from tests.support.dbt_project import copy_project
    from tests.support.warehouses import ingest, small_study
    from tsrate.platform.dbt_child import BUILD_RESULTS, UNIT_TEST_PASS

    project = copy_project(tmp_path / "project")
    monkeypatch.setenv("TSRATE_PROJECT_DIR", str(project))
    monkeypatch.delenv("TSRATE_ALWAYS_UNIT_TESTS", raising=False)
    # the session's parse of the project (the copy's files are the same): no full parse
    warehouse, target = tmp_path / "tsrate.duckdb", parsed_target()
    ingest(warehouse, ["AAPL", "MSFT"])
    study = small_study(study_tickers=["AAPL", "MSFT"], systems=["naive", "random"])
    run_id = forecast_and_build(warehouse, study, target, select=None)

    def unit_results() -> list[str]:
        results = json.loads((target / BUILD_RESULTS).read_text())["results"]
        return [r["unique_id"] for r in results if r["unique_id"].startswith("unit_test.")]

    assert len(unit_results()) >= 10 and (target / UNIT_TEST_PASS).exists()
    # dbt's own artifacts are the build's: its manifest.json (written once, when the build
    # ends, with the compiled models) and its run_results.json, which the data tests'
    # compile after it no longer overwrites
    manifest = json.loads((target / "manifest.json").read_text())
    assert "select" in manifest["nodes"]["model.tsrate.window_errors"]["compiled_code"]
    build_results = json.loads((target / BUILD_RESULTS).read_text())
    assert json.loads((target / "run_results.json").read_text()) == build_results

    lines: list[str] = []
    dbt.build(run_id, warehouse, lines.append, None, target)
    assert unit_results() == []
    assert any("unit tests were not re-run" in line for line in lines), lines

    # a new warehouse built into the same target folder: the key is judged once its models
    # are built (the catalog the fixtures are typed by is then the same), so they are skipped
    fresh = tmp_path / "fresh" / "tsrate.duckdb"
    fresh.parent.mkdir()
    ingest(fresh, ["AAPL", "MSFT"])
    lines.clear()
    forecast_and_build(fresh, study, target, select=None, on_line=lines.append)
    assert unit_results() == []
    assert any("unit tests were not re-run" in line for line in lines), lines
    assert any(line.startswith("built ") and " models" in line for line in lines), lines

    # TSRATE_ALWAYS_UNIT_TESTS=1 runs them anyway: tests/unit/test_dbt_child.py

    spec = project / "models" / "intermediate" / "int_windows_located.yml"
    text = spec.read_text()
    assert "mase_scale: 3.0," in text
    spec.write_text(text.replace("mase_scale: 3.0,", "mase_scale: 4.0,", 1))  # planted
    lines.clear()
    with pytest.raises(dbt.DbtError):
        dbt.build(run_id, warehouse, lines.append, None, target)
    assert any("int_windows_located_mase_scale" in line for line in lines), lines
    assert not (target / UNIT_TEST_PASS).exists()
    # they ran after the models (a second dbt invocation), and the build's results hold both
    assert len(unit_results()) >= 10
    results = json.loads((target / BUILD_RESULTS).read_text())["results"]
    assert any(r["unique_id"] == "model.tsrate.window_errors" for r in results)


def test_a_child_started_ahead_is_kept_when_asked_again_and_stopped_when_discarded(tmp_path):
    """`tsrate run` starts the build's dbt child before importing Prefect and the flows; the
    pipeline asks again: the waiting child is kept (not killed and restarted), a different
    selection gets its own child, and discard_prepared stops both."""
    warehouse = tmp_path / "w.duckdb"
    target = tmp_path / "target"
    try:
        dbt.prepare_build(warehouse, None, target)
        first = dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0]
        dbt.prepare_build(warehouse, None, target)
        again = dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0]
        assert again is first and first.poll() is None
        dbt.prepare_build(warehouse, "window_errors", target)
        other = dbt._PREPARED[dbt._key(warehouse.resolve(), "window_errors", target)][0]
        assert other is not first
    finally:
        dbt.discard_prepared()
    assert first.poll() is not None and other.poll() is not None
    assert not dbt._PREPARED
    # a child that has exited is replaced
    dbt.prepare_build(warehouse, None, target)
    try:
        dead = dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0]
        dead.kill()
        dead.wait()
        dbt.prepare_build(warehouse, None, target)
        assert dbt._PREPARED[dbt._key(warehouse.resolve(), None, target)][0] is not dead
    finally:
        dbt.discard_prepared()
