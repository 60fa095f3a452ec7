"""A reader holding the live warehouse (a read-only DuckDB connection in another process, as
a BI tool or notebook opened on the wrong file) stops a build in one line: the holder's
PID from DuckDB's lock message, that it may be a reader on the live file, and the hint to
read the published snapshot or use `tsrate query`; dbt's own "Could not set lock" line is
not printed beside it. The reader is a real second process (its PID is the one named).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.study_inputs import SMALL, walk_prices
from tsrate.platform.warehouse import connect, store_prices

#: holds a read-only connection on argv[1]; with argv[2], only once a file matching
#: dbt-build-*.log appears in that folder (the build has then passed its own opening of
#: the warehouse, and its dbt child is parsing: dbt opens the file after the parse)
READER = """
import pathlib, sys, time
import duckdb
logs = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else None
while logs is not None and not any(logs.glob("dbt-build-*.log")):
    time.sleep(0.005)
con = duckdb.connect(sys.argv[1], read_only=True)
print("open", flush=True)
time.sleep(300)
"""


def _forecasted_run(warehouse: Path) -> str:
    """A real (tiny) forecast run of the naive system, ready to build."""
    from tsrate.config import Study, load_companies
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts

    study = Study.from_mapping(
        {**SMALL, "study_start": "2022-10-01", "systems": "naive", "perturbations": "P0"}
    )
    with connect(warehouse) as con:
        for ticker in ("AAPL", "MSFT"):
            store_prices(con, walk_prices(ticker, "2022-06-01", 160), "test")
        run_id = run_forecasts(con, study, load_companies(), workers=1).run_id
        finish_run(con, run_id, "forecasted")
    return run_id


@pytest.fixture
def reader():
    """Start a reader process (see :data:`READER`); stopped when the test ends."""
    started: list[subprocess.Popen] = []

    def start(warehouse: Path, after_log_in: Path | None = None) -> subprocess.Popen:
        args = [str(warehouse)] + ([str(after_log_in)] if after_log_in else [])
        process = subprocess.Popen(
            [sys.executable, "-c", READER, *args], stdout=subprocess.PIPE, text=True
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


def _assert_names_the_reader(message: str, warehouse: Path, pid: int) -> None:
    assert "\n" not in message
    assert f"the warehouse {warehouse} is in use by another process (PID {pid})" in message
    assert "a reader opened on the live file" in message
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    assert f"readers should open the published snapshot {snapshot} read-only" in message
    assert "`tsrate query`" in message
    assert "one writer" not in message


def test_a_reader_opened_before_the_build_is_named_in_one_line(
    tmp_path, monkeypatch, capsys, reader
):
    from tsrate import cli

    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    run_id = _forecasted_run(warehouse)
    holder = reader(warehouse)
    assert holder.stdout.readline().strip() == "open"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    code = cli.main(["build"])
    captured = capsys.readouterr()
    assert code == 2
    err = captured.err.splitlines()
    assert len(err) == 1 and err[0].startswith("tsrate: error: ")
    _assert_names_the_reader(err[0], warehouse, holder.pid)
    assert "lock" not in captured.out.lower()
    holder.kill()
    holder.wait()
    with connect(warehouse, read_only=True) as con:  # nothing was marked failed
        status = con.execute("select status from raw.runs where run_id = ?", [run_id])
        assert status.fetchone() == ("forecasted",)


def test_a_reader_that_opens_while_dbt_parses_stops_the_build_in_one_line(
    tmp_path, monkeypatch, reader, dbt_target
):
    from tsrate.platform import dbt_runner as dbt

    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    run_id = _forecasted_run(warehouse)
    holder = reader(warehouse, after_log_in=dbt.log_folder(warehouse))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    lines: list[str] = []
    with pytest.raises(dbt.DbtError) as raised:  # WarehouseInUse, one of them
        dbt.build(run_id=run_id, warehouse=warehouse, target_path=dbt_target, on_line=lines.append)
    assert holder.stdout.readline().strip() == "open"  # it held the file while dbt ran
    _assert_names_the_reader(str(raised.value), warehouse.resolve(), holder.pid)
    assert not [line for line in lines if "lock" in line.lower()]  # one line only
    assert any(line.startswith("parsed the project") for line in lines)
