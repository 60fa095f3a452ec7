"""Every CLI failure is one line ``tsrate: error: ...``; ``--debug`` adds the traceback.

Runs the entry point's function (``tsrate.cli.main``) in this process; a real ``tsrate``
child process, as a user starts it, is checked in tests/integration/test_cli_entry_point.py."""

from __future__ import annotations

import json
import logging

import duckdb
import pytest

from tsrate.cli import main, one_line


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
        ("report of junk", ["report", "--snapshot", str(junk)], ok, "is not a DuckDB file"),
        (
            "not a directory",
            ["ingest", str(prices)],
            {"TSRATE_WAREHOUSE": str(prices / "tsrate.duckdb")},
            "prices.csv: File exists (hint: it exists already (a file where a folder",
        ),
    ]
    for name, folder in exports.items():
        argv = ["import-predictions", str(preds), "--system", "mine", "--manifest", str(folder)]
        cases.append((f"manifest {name}", argv, ok, "manifest"))
    return tmp_path, cases


def _in_process(argv: list[str], env: dict[str, str], monkeypatch, capsys):
    """``tsrate.cli.main(argv)`` in this process with ``env`` set: (status, stdout, stderr)."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    capsys.readouterr()  # drop what came before
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_bad_inputs_print_one_line_and_a_traceback_only_with_debug(bad_inputs, monkeypatch, capsys):
    """Every case in-process through the entry point's function (``main``); the same check
    through a real ``python -m tsrate.cli`` child is in
    tests/integration/test_cli_entry_point.py."""
    cwd, cases = bad_inputs
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("TSRATE_DEBUG", raising=False)
    for name, argv, env, expected in cases:
        status, out, err = _in_process(argv, env, monkeypatch, capsys)
        assert status in (1, 2), (name, out, err)
        assert "Traceback" not in err + out, (name, err)
        last = err.strip().splitlines()[-1]
        assert last.startswith("tsrate: error: "), (name, err)
        assert expected in last, (name, last)
        errors = [line for line in err.splitlines() if "error" in line.lower()]
        assert errors == [last], (name, err)  # nothing else says "error"
        loud_status, _, loud = _in_process(["--debug", *argv], env, monkeypatch, capsys)
        assert loud_status == status, name
        assert "Traceback (most recent call last)" in loud, (name, loud)
        assert loud.strip().splitlines()[-1] == last, name
    _, _, debug_after = _in_process([*cases[0][1], "--debug"], cases[0][2], monkeypatch, capsys)
    assert "Traceback" in debug_after  # --debug works after the command too


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

    # the factory is process-wide, whichever logger: a logger of its own here, as Prefect's
    # (once another test imported Prefect) would also try to send the record to an API
    logger = logging.getLogger("tsrate.tests.task_runs")
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
