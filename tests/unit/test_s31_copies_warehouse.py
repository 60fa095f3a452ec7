"""Copied windows in a real run: each stored partition counts the windows whose forecast
repeats a stretch of its own context (raw.forecast_partitions.n_copied_windows), the run's
summary and `tsrate run`'s problem lines name the systems with any.

Real parts: a real run (in this process: workers=1) of the naive baseline and seasonal
naive on real prices in a DuckDB file. Seasonal naive with a horizon of 3 and a season of 5
trading days forecasts the values 5, 4 and 3 steps before the forecast origin: a stretch of
its context, a genuine copy, on every window whose stretch has no missing value. Naive's
last value repeated is a copy only where the context holds it 3 times in a row. The test
counts copies itself from the stored inputs and forecasts (plain loops)."""

from __future__ import annotations

import duckdb
import pytest

from tests.support.copy_study import is_copy, stored_windows, study
from tests.support.import_study import imported_partition_counts
from tests.support.warehouses import ingest, read, rows
from tsrate.config import load_companies
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect
from tsrate.robustness.forecast.execute import RunSummary, run_forecasts, run_problems


@pytest.fixture(scope="module")
def copy_run(tmp_path_factory):
    warehouse = tmp_path_factory.mktemp("copies") / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "JPM"])
    with connect(warehouse) as con:
        summary = run_forecasts(con, study(), load_companies(), workers=1, progress=print)
    return warehouse, summary


def test_each_partition_counts_exactly_the_windows_that_copy_their_context(copy_run):
    warehouse, summary = copy_run
    windows = stored_windows(warehouse)
    windows["copy"] = [
        is_copy(c, f) for c, f in zip(windows.context, windows.forecast, strict=True)
    ]
    expected = windows.groupby("partition_key")["copy"].sum().astype(int)
    stored = read(
        warehouse,
        "select partition_key, system_id, perturbation_id, n_windows, n_copied_windows "
        "from raw.forecast_partitions",
    ).set_index("partition_key")
    assert len(stored) == 2 * 2 * 3
    assert stored["n_copied_windows"].to_dict() == expected.reindex(stored.index).to_dict()

    seasonal = stored[stored["system_id"] == "seasonal_naive"]
    # P0 and P1 (a zero is a value like any other): every window is a copy
    clean = seasonal[seasonal["perturbation_id"] != "P3"]
    assert (clean["n_copied_windows"] == clean["n_windows"]).all()
    # P3: a window whose copied stretch holds the missing value forecasts the value before
    # it there, so not every window is a copy, but most are
    missing = seasonal[seasonal["perturbation_id"] == "P3"]
    assert (missing["n_copied_windows"] < missing["n_windows"]).all()
    assert (missing["n_copied_windows"] > missing["n_windows"] / 2).all()
    # naive's last value repeated: no copy on these real prices
    assert (stored.loc[stored["system_id"] == "naive", "n_copied_windows"] == 0).all()

    # the run says so (`tsrate run` prints run_problems); scores see the same forecasts
    total = int(seasonal["n_copied_windows"].sum())
    assert summary.copied_windows == {"seasonal_naive": total}
    line = f"seasonal_naive: {total} window(s) whose forecast repeats a stretch of its own input"
    assert any(problem.startswith(line) for problem in summary.describe_problems())
    assert not any(p.startswith("naive:") for p in summary.describe_problems())
    with connect(warehouse, read_only=True) as con:
        assert run_problems(con, summary.run_id) == summary.describe_problems()


def test_a_run_reusing_the_partitions_reports_their_copies(copy_run, tmp_path):
    warehouse, summary = copy_run
    copy = tmp_path / "reuse.duckdb"
    copy.write_bytes(warehouse.read_bytes())
    with connect(copy) as con:
        again = run_forecasts(con, study(), load_companies(), workers=1, progress=print)
    assert again.computed == 0 and again.reused == 12
    assert again.copied_windows == summary.copied_windows


def test_an_older_warehouse_gains_the_column_and_reads_its_partitions_as_unknown(tmp_path):
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(
            "create schema raw; create table raw.forecast_partitions (partition_key varchar "
            "primary key, input_key varchar not null, run_id varchar not null, system_id "
            "varchar not null, ticker varchar not null, perturbation_id varchar not null, "
            "n_windows integer not null, n_rows bigint not null, seconds double not null, "
            "finished_at timestamp not null, n_fallback_windows integer); "
            "insert into raw.forecast_partitions values "
            "('old', 'old', 'r0', 'gemma3_270m', 'AAPL', 'P0', 5, 10, 0.1, now()::timestamp, 0)"
        )
        # a warehouse read before the migration: no copies to report, no error
        create_raw_tables(con)
        con.execute("insert into raw.run_partitions values ('r0', 'old', false)")
        assert run_problems(con, "r0") == []
    assert rows(path, "select n_copied_windows from raw.forecast_partitions") == [(None,)]


def test_a_system_without_copies_gets_no_line():
    summary = RunSummary("r", copied_windows={})
    assert summary.describe_problems() == []
    lines = RunSummary("r", copied_windows={"b": 2, "a": 1}).describe_problems()
    assert [line.split(":")[0] for line in lines] == ["a", "b"]
    assert lines[0].startswith("a: 1 window(s) whose forecast repeats a stretch")


def test_imported_predictions_record_an_unknown_copy_count(warehouse, good, tmp_path):
    """tsrate does not see the context an imported model was given: its partitions read null,
    even where its forecasts happen to repeat a stretch of the stored context."""
    counts = imported_partition_counts(warehouse, good, tmp_path, "n_copied_windows")
    assert counts and counts == [(None,)] * len(counts)
