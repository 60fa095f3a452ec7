"""Every CLI failure is one line ``tsrate: error: ...``; ``--debug`` adds the traceback.

Runs the real ``tsrate`` entry point in child processes, as a user does."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tsrate.cli import main, one_line
from tsrate.config import project_dir

#: The children import this checkout (src/ first), not an installed copy.
PYTHONPATH = os.pathsep.join([str(project_dir() / "src"), str(project_dir())])


def _tsrate(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tsrate.cli", *args],
        env=dict(os.environ, PYTHONPATH=PYTHONPATH, TSRATE_PROJECT_DIR=str(project_dir()), **env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def bad_inputs(tmp_path):
    """(name, argv, env, expected text) of bad inputs that used to end in tracebacks."""
    junk = tmp_path / "junk.duckdb"
    junk.write_bytes(b"not a database, just text\n" * 400)
    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    con = duckdb.connect(str(warehouse))
    con.execute("create table t as select 1 as x")
    con.close()
    prices = tmp_path / "prices.csv"
    prices.write_text("ticker,date,close\nAAPL,2022-01-03,10\nAAPL,2022-01-04,11\n")
    exports = {}
    for name, manifest in {
        "study-not-a-mapping": {"format_version": 1, "study": 5, "tickers": {}, "horizon": 5},
        "tickers-a-list": {
            "format_version": 1,
            "study": {"tickers": ["AAPL"]},
            "tickers": [],
            "horizon": 5,
        },
        "binary": None,
    }.items():
        folder = tmp_path / name
        folder.mkdir()
        if manifest is None:
            (folder / "manifest.json").write_bytes(b"\xff\xfe\x00garbage")
        else:
            (folder / "manifest.json").write_text(json.dumps(manifest))
        exports[name] = folder
    zones = tmp_path / "zones.csv"
    zones.write_text(
        "ticker,date,close\nAAPL,2022-01-03T00:00:00+00:00,10\nAAPL,2022-01-04T00:00:00-05:00,11\n"
    )
    preds = tmp_path / "preds.csv"
    preds.write_text("ticker,window_end_date,perturbation_id,horizon_step,forecast\n")
    on_junk = {"TSRATE_WAREHOUSE": str(junk)}
    ok = {"TSRATE_WAREHOUSE": str(warehouse)}
    cases = [
        ("empty query", ["query", ""], ok, "no SQL statement given"),
        ("query on junk", ["query", "select 1", "--live"], on_junk, "cannot be opened"),
        ("runs on junk", ["runs"], on_junk, "cannot be opened"),
        ("ingest into junk", ["ingest", str(prices)], on_junk, "DuckDB: "),
        ("mixed time zones", ["ingest", str(zones)], ok, "the dates mix time zones"),
        ("report of junk", ["report", "--snapshot", str(junk)], ok, "DuckDB: "),
        (
            "not a directory",
            ["ingest", str(prices)],
            {"TSRATE_WAREHOUSE": str(prices / "tsrate.duckdb")},
            "unexpected FileExistsError",
        ),
    ]
    for name, folder in exports.items():
        argv = ["import-predictions", str(preds), "--system", "mine", "--manifest", str(folder)]
        cases.append((f"manifest {name}", argv, ok, "manifest"))
    return tmp_path, cases


def test_bad_inputs_print_one_line_and_a_traceback_only_with_debug(bad_inputs):
    cwd, cases = bad_inputs
    for name, argv, env, expected in cases:
        quiet = _tsrate(*argv, env=env, cwd=cwd)
        assert quiet.returncode in (1, 2), (name, quiet.stdout, quiet.stderr)
        assert "Traceback" not in quiet.stderr + quiet.stdout, (name, quiet.stderr)
        last = quiet.stderr.strip().splitlines()[-1]
        assert last.startswith("tsrate: error: "), (name, quiet.stderr)
        assert expected in last, (name, last)
        errors = [line for line in quiet.stderr.splitlines() if "error" in line.lower()]
        assert errors == [last], (name, quiet.stderr)  # nothing else says "error"
        loud = _tsrate("--debug", *argv, env=env, cwd=cwd)
        assert loud.returncode == quiet.returncode, name
        assert "Traceback (most recent call last)" in loud.stderr, (name, loud.stderr)
        assert loud.stderr.strip().splitlines()[-1] == last, name
    debug_after = _tsrate(*cases[0][1], "--debug", env=cases[0][2], cwd=cwd)
    assert "Traceback" in debug_after.stderr  # --debug works after the command too


def test_one_line_joins_listed_problems():
    message = "prices.csv: rejected, nothing was stored:\n  - 2 duplicate rows\n  - a gap"
    assert one_line(message) == "prices.csv: rejected, nothing was stored: 2 duplicate rows; a gap"
    assert one_line("a\nb") == "a; b"
    assert one_line("") == ""


def test_in_process_errors_are_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "none" / "tsrate.duckdb"))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    bad = tmp_path / "bad.csv"
    bad.write_text("ticker,date,close\nAAPL,2022-01-03,one\nAAPL,2022-01-03,-1\n")
    assert main(["ingest", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"tsrate: error: {bad}: rejected"), err
    assert "non-numeric" in err[0] and "non-positive" in err[0]


def test_without_debug_log_records_carry_no_traceback(caplog):
    from tsrate import TsrateError
    from tsrate.cli import _quiet_tracebacks

    logger = logging.getLogger("prefect.task_runs")
    for debug in (False, True):
        caplog.clear()
        with _quiet_tracebacks(debug), caplog.at_level(logging.ERROR):
            try:
                raise TsrateError("prices.csv: rejected:\n  - a gap")
            except TsrateError:
                logger.error("Task run failed with exception %s", "X", exc_info=True)
        (record,) = caplog.records
        if debug:
            assert record.exc_info is not None
        else:
            assert record.exc_info is None
            assert record.getMessage() == (
                "Task run failed with exception X (TsrateError: prices.csv: rejected: a gap)"
            )
    assert logging.getLogRecordFactory() is logging.LogRecord  # restored


def test_only_recoverable_io_is_retried():
    from flows.ingest import download_prices, read_prices, recoverable
    from tsrate import TsrateError
    from tsrate.robustness.sources import PriceValidationError

    assert read_prices.retries == 0  # a file or the bundled sample: a failure is final
    assert download_prices.retries == 3
    assert not recoverable(PriceValidationError("x.csv", ["mixed time zones"]))
    assert not recoverable(TsrateError("bad"))
    assert not recoverable(ValueError("Mixed timezones detected"))
    assert not recoverable(KeyError("close"))
    assert recoverable(ConnectionResetError())
    assert recoverable(TimeoutError())

    class YFRateLimitError(Exception):
        pass

    assert recoverable(YFRateLimitError("Too Many Requests"))
