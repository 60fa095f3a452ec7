"""The Prefect flows (``flows/``) run in this process as plain functions (no Prefect API):
which steps they run and with what, what they record when a step fails, and their
defaults, against what their docstrings say.

Written for round 10 of the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep10_flows.json). What is pinned, for ``flows/pipeline.py``: ``auto``
ingests the bundled sample only when a study ticker has no stored prices, ``none`` never
ingests, a named source ingests the study's tickers; ``rate=False`` stops at the forecasts
(``forecasted``); a second run reuses the stored partitions unless ``force``; the writer
lock fails at once by default; the warehouse given is the one written; the publish task's
statuses (``publishing`` before the swap, ``build_failed`` when the data tests failed,
``publish_failed`` otherwise, each with the last 2,000 characters of the error) and that a
failed publish stops the build still pending rather than waiting for its verdict. For
``flows/forecast.py``: the run id and warehouse given are the ones recorded (else a new id
and ``TSRATE_WAREHOUSE``), partitions reused unless ``force``, the writer lock's default,
its summary line (counts, per-system seconds or ``nothing computed``, ``none`` for an
empty list), and a failure marking the run ``failed`` with the first 2,000 characters of
``forecast: <error>`` unless it was Ctrl-C or SIGTERM (left ``running``, as a kill). For
``flows/ingest.py``: the retry condition and the download's documented backoff, which
source reads what (only ``yahoo`` downloads, and asks for the tickers given), a file's
rows stored under its path, the warehouse given, and the defaults of the flow and its
store task (a changed close refused, a busy warehouse failing at once). For
``flows/build.py``: the lock taken is the given warehouse's (else ``TSRATE_WAREHOUSE``'s),
failing at once by default. yfinance (not
installed here, and a network client) is stood in for by a module whose ``download``
returns closes shaped as yfinance's.

Real parts: temporary DuckDB warehouses, the bundled price sample, the ``naive`` system
forecasting one partition in this process (``workers=1``). A build whose data tests are
still running is a dbt child process; here it is stood in for by an object with the two
attributes ``finish_build`` reads (``poll``, ``kill``), a finished thread and its outcome,
as ``dbt_runner.build`` registers them. The paths that start a dbt build or a fork server
are tests/integration/test_sweep10_flows.py's.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import flows.pipeline as pipeline
from flows.build import build_flow
from flows.forecast import forecast_flow
from flows.ingest import (
    _retry_on_io,
    download_prices,
    fetch_prices,
    ingest_flow,
    read_prices,
    store,
)
from flows.pipeline import _interrupted, _missing_tickers, pipeline_flow, publish_task
from tests.support.locks import another_writer
from tests.support.warehouses import rows as _rows
from tsrate import TsrateError
from tsrate.platform import dbt_runner as dbt
from tsrate.platform.locking import WarehouseBusy, lock_path
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.sources import PriceValidationError, load_skfolio_sp500, read_price_file

#: one ticker, one system, one perturbation: one partition, forecast in this process
STUDY = {"study_tickers": "AAPL", "study_start": "2022-09-01", "study_end": "2022-11-30",
         "context_length": 30, "horizon": 5, "systems": "naive", "perturbations": "P0"}  # fmt: skip


def _run(warehouse: Path, **options) -> str:
    options = {"overrides": STUDY, "workers": 1, "rate": False, **options}
    return pipeline_flow.fn(warehouse=str(warehouse), **options)


def _stored_tickers(warehouse: Path) -> list[str]:
    return [r[0] for r in _rows(warehouse, "select distinct ticker from raw.prices order by 1")]


def _store(warehouse: Path, tickers: list[str]) -> None:
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(tickers), "skfolio")


# --- flows/pipeline.py: which steps run ----------------------------------------------------


def test_interrupted_means_ctrl_c_sigterm_or_prefects_termination_signal_only():
    class TerminationSignal(BaseException):  # Prefect's, matched by its name
        pass

    assert _interrupted(KeyboardInterrupt())
    assert _interrupted(TerminationSignal())
    assert not _interrupted(RuntimeError("dbt failed"))
    assert not _interrupted(SystemExit(1))


def test_missing_tickers_are_the_study_tickers_without_stored_prices_in_study_order(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    _store(warehouse, ["MSFT", "AAPL"])
    assert _missing_tickers(str(warehouse), ("PFE", "AAPL", "KO", "MSFT")) == ["PFE", "KO"]
    assert _missing_tickers(str(warehouse), ("AAPL", "MSFT")) == []


def test_auto_ingests_the_whole_sample_only_when_a_study_ticker_is_missing(tmp_path, caplog):
    """The docstring: ``auto`` ingests the bundled skfolio sample (all 20 of its tickers)
    when a study ticker has no stored prices; once they are stored it ingests nothing."""
    warehouse = tmp_path / "w.duckdb"
    caplog.set_level(logging.INFO, logger="tsrate.run")
    first = _run(warehouse, source="auto")
    assert len(_stored_tickers(warehouse)) == 20  # the whole sample, not the study's one
    assert "no stored prices for ['AAPL']" in caplog.text
    loaded = _rows(warehouse, "select count(*), max(loaded_at) from raw.prices")
    caplog.clear()
    second = _run(warehouse, source="auto")
    assert "no stored prices" not in caplog.text and "ingested" not in caplog.text
    assert _rows(warehouse, "select count(*), max(loaded_at) from raw.prices") == loaded
    statuses = dict(_rows(warehouse, "select run_id, status from raw.runs"))
    assert statuses == {first: "forecasted", second: "forecasted"}


def test_a_named_source_ingests_the_study_tickers_and_none_ingests_nothing(tmp_path, caplog):
    warehouse = tmp_path / "w.duckdb"
    caplog.set_level(logging.INFO, logger="tsrate.run")
    _run(warehouse, source="skfolio")
    assert _stored_tickers(warehouse) == ["AAPL"]  # the study's tickers only
    assert "ingested" in caplog.text
    caplog.clear()
    _run(warehouse, source="none")
    assert "ingested" not in caplog.text and "no stored prices" not in caplog.text
    assert _stored_tickers(warehouse) == ["AAPL"]


def test_without_rate_the_run_stops_forecasted_and_says_so(tmp_path, caplog):
    warehouse = tmp_path / "w.duckdb"
    caplog.set_level(logging.INFO, logger="tsrate.run")
    run_id = _run(warehouse, source="skfolio")
    assert _rows(warehouse, "select run_id, status, message from raw.runs") == [
        (run_id, "forecasted", None)
    ]
    assert f"run {run_id} forecasted; ratings are left for the next full run" in caplog.text
    assert dbt._PREPARED == {}  # no dbt child was started for a run that does not rate


def test_a_second_run_reuses_the_stored_partitions_unless_forced(tmp_path):
    """``force`` defaults to False: the finished partition is reused, not recomputed."""
    warehouse = tmp_path / "w.duckdb"
    _run(warehouse, source="skfolio")
    again = _run(warehouse, source="none")
    forced = _run(warehouse, source="none", force=True)
    reused = dict(
        _rows(warehouse, "select run_id, bool_and(reused) from raw.run_partitions group by 1")
    )
    assert reused[again] is True and reused[forced] is False


def test_the_warehouse_given_is_the_one_written_and_the_default_is_tsrate_warehouse(
    tmp_path, monkeypatch
):
    default = tmp_path / "default" / "w.duckdb"
    _store(default, ["AAPL"])
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(default))
    given = tmp_path / "given" / "w.duckdb"
    run_id = _run(given, source="skfolio")
    assert _rows(given, "select run_id from raw.runs") == [(run_id,)]
    assert _rows(default, "select count(*) from raw.runs") == [(0,)]
    by_default = pipeline_flow.fn(overrides=STUDY, source="none", workers=1, rate=False)
    assert _rows(default, "select run_id from raw.runs") == [(by_default,)]


def test_a_busy_warehouse_fails_at_once_by_default(tmp_path):
    """``lock_timeout`` defaults to 0: fail at once, without waiting (no "after waiting")."""
    warehouse = tmp_path / "w.duckdb"
    _store(warehouse, ["AAPL"])
    with another_writer(warehouse), pytest.raises(WarehouseBusy) as failed:
        pipeline_flow.fn(overrides=STUDY, source="none", workers=1, rate=False,
                         warehouse=str(warehouse))  # fmt: skip
    assert "is being written by" in str(failed.value)
    assert "after waiting" not in str(failed.value)


# --- flows/pipeline.py: the publish task --------------------------------------------------


def _forecasted(tmp_path: Path, folder: str = "w", marts: bool = True) -> tuple[Path, str]:
    """A warehouse holding one forecasted run (and, with ``marts``, one mart table)."""
    warehouse = tmp_path / folder / "w.duckdb"
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    run_id = _run(warehouse, source="skfolio")
    if marts:
        with connect(warehouse) as con:
            con.execute("create schema marts; create table marts.t as select 1 as x")
    return warehouse, run_id


def _status(warehouse: Path, run_id: str) -> tuple[str, str | None]:
    return _rows(warehouse, f"select status, message from raw.runs where run_id = '{run_id}'")[0]


class _StandInChild:
    """dbt's child process as ``finish_build`` reads it: still running until killed."""

    def __init__(self) -> None:
        self.killed = False

    def poll(self):  # noqa: ANN201
        return 1 if self.killed else None

    def kill(self) -> None:
        self.killed = True


def _pending_build(warehouse: Path, error: BaseException | None) -> _StandInChild:
    """Register a build that released ``warehouse`` early, as ``dbt_runner.build`` does."""
    child = _StandInChild()
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    outcome = {"error": error} if error is not None else {"lines": []}
    dbt._PENDING[str(warehouse.resolve())] = (child, thread, outcome)
    return child


@pytest.fixture
def clean_dbt_state():
    yield
    dbt._PENDING.clear()
    pipeline._RENDERED.clear()


def test_publishing_without_a_pending_build_marks_the_run_publishing(tmp_path, clean_dbt_state):
    warehouse, run_id = _forecasted(tmp_path)
    snapshot = publish_task.fn(str(warehouse), run_id)
    assert snapshot == str(tmp_path / "w" / "published" / "tsrate.duckdb")
    assert _rows(Path(snapshot), "select run_id from published_runs") == [(run_id,)]
    assert _status(warehouse, run_id) == ("publishing", None)
    assert run_id not in pipeline._RENDERED  # no report asked: none rendered beside


def test_publishing_waits_for_a_pending_build_that_passed(tmp_path, clean_dbt_state):
    warehouse, run_id = _forecasted(tmp_path)
    child = _pending_build(warehouse, None)
    publish_task.fn(str(warehouse), run_id)
    assert not child.killed and not dbt.pending_build(warehouse)  # its verdict was read
    assert _status(warehouse, run_id) == ("publishing", None)


def test_failed_data_tests_mark_the_run_build_failed_with_the_errors_tail(
    tmp_path, clean_dbt_state
):
    warehouse, run_id = _forecasted(tmp_path)
    message = "A" + "b" * 2500 + "the failing tests named at the end"
    _pending_build(warehouse, dbt.DbtError(message))
    with pytest.raises(dbt.DbtError) as failed:
        publish_task.fn(str(warehouse), run_id)
    assert str(failed.value) == message  # dbt's own error, not the wrapper
    assert _status(warehouse, run_id) == ("build_failed", message[len(message) - 2000 :])
    assert not (tmp_path / "w" / "published" / "tsrate.duckdb").exists()  # nothing swapped in


def test_a_failed_publication_stops_the_pending_build_and_records_the_errors_tail(
    tmp_path, clean_dbt_state
):
    """The publish error (here: no marts; the warehouse's long path makes the message
    longer than 2,000 characters) is what is raised and stored, last 2,000 characters;
    the build still running is stopped, its verdict (a failure too) not waited for."""
    folder = os.path.join(*["d" * 250] * 9)
    warehouse, run_id = _forecasted(tmp_path, folder, marts=False)
    child = _pending_build(warehouse, dbt.DbtError("the data tests failed too"))
    with pytest.raises(Exception, match="holds no marts to publish") as failed:
        publish_task.fn(str(warehouse), run_id)
    error = str(failed.value)
    assert len(error) > 2001 and error.startswith("/")
    assert child.killed and not dbt.pending_build(warehouse)
    assert _status(warehouse, run_id) == ("publish_failed", error[len(error) - 2000 :])


def test_the_publication_line_reports_its_own_seconds(tmp_path, caplog, clean_dbt_state):
    warehouse, run_id = _forecasted(tmp_path)
    caplog.set_level(logging.INFO, logger="tsrate.run")
    started = time.perf_counter()
    publish_task.fn(str(warehouse), run_id)
    elapsed = time.perf_counter() - started
    (seconds,) = re.findall(r"published 1 tables \(1 rows\) to .* in ([\d.]+)s", caplog.text)
    assert 0 <= float(seconds) <= elapsed + 0.05  # its own time, to the 0.1 s shown


# --- flows/forecast.py ----------------------------------------------------------------------


def _priced(tmp_path: Path) -> Path:
    warehouse = tmp_path / "w.duckdb"
    _store(warehouse, ["AAPL"])
    return warehouse


def _forecast(warehouse: Path | None, **options):
    options = {"overrides": STUDY, "workers": 1, **options}
    if warehouse is not None:
        options["warehouse"] = str(warehouse)
    return forecast_flow.fn(**options)


def test_the_forecast_flow_records_the_run_id_it_is_given_in_the_warehouse_given(
    tmp_path, monkeypatch
):
    default = _priced(tmp_path / "default")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(default))
    given = _priced(tmp_path / "given")
    summary = _forecast(given, run_id="the-pipelines-run")
    assert summary.run_id == "the-pipelines-run"
    assert _rows(given, "select run_id, status from raw.runs") == [
        ("the-pipelines-run", "forecasted")
    ]
    assert _rows(default, "select count(*) from raw.runs") == [(0,)]
    made = _forecast(None)  # no warehouse, no run id: TSRATE_WAREHOUSE and a new id
    assert _rows(default, "select run_id from raw.runs") == [(made.run_id,)]
    assert re.fullmatch(r"\d{8}T\d{6}-[0-9a-f]{8}", made.run_id)


def test_the_forecast_flow_reuses_unless_forced_and_its_line_says_what_it_did(tmp_path, caplog):
    """``force`` defaults to False. The summary line: partitions, reused, computed, rows;
    per-system seconds only when something was computed; ``none`` for an empty list."""
    warehouse = _priced(tmp_path)
    caplog.set_level(logging.INFO, logger="tsrate.run")
    first = _forecast(warehouse)
    line = (
        f"run {first.run_id} forecast: 1 partitions (0 reused, 1 computed, 145 rows) in "  # 29 x 5
    )
    assert line in caplog.text
    # computed in this process: its setup counted once per process (none when built before)
    assert re.search(r"s \[naive [\d.]+s\]; forecast CPU \[naive [\d.]+s\]; worker setup "
                     r"\[(none|naive [\d.]+s)\]", caplog.text)  # fmt: skip
    caplog.clear()
    again = _forecast(warehouse)
    assert (again.reused, again.computed) == (1, 0)
    assert f"run {again.run_id} forecast: 1 partitions (1 reused, 0 computed, 0 rows)" in (
        caplog.text
    )
    assert "[nothing computed]; forecast CPU [none]; worker setup [none]" in caplog.text
    forced = _forecast(warehouse, force=True)
    assert (forced.reused, forced.computed) == (0, 1)


def test_a_busy_warehouse_fails_the_forecast_flow_at_once_by_default(tmp_path):
    warehouse = _priced(tmp_path)
    with another_writer(warehouse), pytest.raises(WarehouseBusy) as failed:
        _forecast(warehouse)
    assert "after waiting" not in str(failed.value)


class _StopAtTheFirstPartition(logging.Filter):
    """Raise ``error`` from the run's progress line of its first partition (a logger's
    filter runs in the caller: the error surfaces inside ``run_forecasts``)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith("[1/1]"):
            raise self.error
        return True


class TerminationSignal(BaseException):  # Prefect's SIGTERM, matched by its name
    pass


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (RuntimeError("A" + "b" * 2500), "failed"),
        (KeyboardInterrupt(), "running"),  # stopped: left as a kill leaves it
        (TerminationSignal(), "running"),
    ],
)
def test_a_forecast_failure_marks_the_run_failed_unless_it_was_stopped(
    tmp_path, caplog, error, status
):
    warehouse = _priced(tmp_path)
    caplog.set_level(logging.INFO, logger="tsrate.run")
    stop = _StopAtTheFirstPartition(error)
    logging.getLogger("tsrate.run").addFilter(stop)
    try:
        with pytest.raises(type(error)):
            _forecast(warehouse, run_id="r")
    finally:
        logging.getLogger("tsrate.run").removeFilter(stop)
    ((stored, message),) = _rows(warehouse, "select status, message from raw.runs")
    assert stored == status
    if status == "failed":
        assert message == f"forecast: {error}"[:2000]
    else:
        assert message is None


def test_a_forecast_failure_before_the_run_is_recorded_records_nothing(tmp_path):
    warehouse = _priced(tmp_path)
    with pytest.raises(Exception, match="unknown system 'nope'"):
        _forecast(warehouse, overrides={**STUDY, "systems": "naive,nope"})
    assert _rows(warehouse, "select count(*) from raw.runs") == [(0,)]


# --- flows/ingest.py ------------------------------------------------------------------------


def _price_file(folder: Path, closes=range(100, 130), name: str = "prices.csv") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    dates = pd.bdate_range("2022-01-03", periods=len(closes))
    path = folder / name
    pd.DataFrame(
        {"date": dates.strftime("%Y-%m-%d"), "ticker": "AAPL", "close": list(closes)}
    ).to_csv(path, index=False)
    return path


class _State:
    """A finished task run's state as the retry condition reads it: ``result()``."""

    def __init__(self, error: BaseException | None) -> None:
        self.error = error

    def result(self):  # noqa: ANN201
        if self.error is not None:
            raise self.error
        return "prices"


def test_the_retry_condition_retries_only_recoverable_failures():
    assert _retry_on_io(None, None, _State(ConnectionResetError())) is True
    assert _retry_on_io(None, None, _State(TsrateError("a gap"))) is False
    assert _retry_on_io(None, None, _State(KeyError("close"))) is False
    assert _retry_on_io(None, None, _State(None)) is False  # nothing failed: nothing to retry


def test_the_download_retries_with_the_documented_backoff():
    """Three retries at Prefect's ``exponential_backoff(5)`` (5 s doubling), each delay
    varied by up to half (the jitter factor 0.5); a file or the sample is never retried."""
    from prefect.tasks import exponential_backoff

    assert download_prices.retries == 3
    assert list(download_prices.retry_delay_seconds) == exponential_backoff(5)(3) == [5, 10, 20]
    assert download_prices.retry_jitter_factor == 0.5
    assert read_prices.retries == 0


def test_read_prices_reads_the_sample_for_the_tickers_or_the_file(tmp_path):
    sample = read_prices.fn("skfolio", None, ["KO", "AAPL"])
    assert sorted(sample["ticker"].unique()) == ["AAPL", "KO"]
    from_file = read_prices.fn("file", str(_price_file(tmp_path)), None)
    assert from_file["close"].tolist() == list(range(100, 130))
    with pytest.raises(TsrateError, match="unknown price source 'yahoo'"):
        read_prices.fn("yahoo", None, None)  # a download is download_prices' only


@pytest.fixture
def yahoo(monkeypatch):
    """yfinance (not installed here, and a network client) stood in for by a module whose
    ``download`` returns closes shaped as yfinance's and records what it was asked."""
    asked: list[tuple] = []

    def download(tickers, start, end, **options):  # noqa: ANN001, ANN202
        asked.append((list(tickers), start, end))
        dates = pd.bdate_range(start, pd.Timestamp(end) - pd.Timedelta(days=1))
        if not tickers:
            return pd.DataFrame()
        columns = pd.MultiIndex.from_product([["Close"], tickers])
        values = np.arange(1, len(dates) * len(tickers) + 1).reshape(len(dates), -1) + 50.0
        return pd.DataFrame(values, index=pd.DatetimeIndex(dates, name="Date"), columns=columns)

    module = types.ModuleType("yfinance")
    module.download = download
    monkeypatch.setitem(sys.modules, "yfinance", module)
    return asked


def test_fetch_prices_downloads_only_for_yahoo(yahoo, tmp_path):
    prices = fetch_prices("yahoo", None, ["KO"], "2022-01-03", "2022-01-07")
    assert yahoo == [(["KO"], "2022-01-03", "2022-01-08")]  # yfinance's end is exclusive
    assert prices["close"].tolist() == [51.0, 52.0, 53.0, 54.0, 55.0]
    sample = fetch_prices("skfolio", None, ["KO"], "2022-01-03", "2022-01-07")
    assert len(yahoo) == 1 and len(sample) > 5  # the sample, whole, not a download
    fetch_prices("file", str(_price_file(tmp_path)), None, None, None)
    assert len(yahoo) == 1


def test_a_download_without_tickers_asks_for_none(yahoo):
    with pytest.raises(PriceValidationError, match=r"Yahoo Finance \[\]"):
        download_prices.fn(None, "2022-01-03", "2022-01-07")
    assert yahoo == [([], "2022-01-03", "2022-01-08")]


def test_ingesting_a_file_stores_it_under_its_path_and_says_so(tmp_path, caplog):
    warehouse = tmp_path / "w.duckdb"
    csv = _price_file(tmp_path)
    caplog.set_level(logging.INFO, logger="tsrate.run")
    started = time.perf_counter()
    stored = ingest_flow.fn(source="file", path=str(csv), warehouse=str(warehouse))
    elapsed = time.perf_counter() - started
    assert stored == {"AAPL": 30}
    assert _rows(warehouse, "select distinct source from raw.prices") == [(str(csv),)]
    (seconds,) = re.findall(rf"from {re.escape(str(csv))} into .* in ([\d.]+)s", caplog.text)
    assert 0 <= float(seconds) <= elapsed + 0.05
    ingest_flow.fn(source="skfolio", tickers=["KO"], warehouse=str(warehouse))
    assert _rows(warehouse, "select distinct source from raw.prices where ticker = 'KO'") == [
        ("skfolio",)
    ]


def test_ingesting_writes_the_warehouse_given_else_tsrate_warehouse(tmp_path, monkeypatch):
    default = tmp_path / "default" / "w.duckdb"
    default.parent.mkdir()
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(default))
    given = tmp_path / "w.duckdb"
    ingest_flow.fn(source="file", path=str(_price_file(tmp_path)), warehouse=str(given))
    assert _stored_tickers(given) == ["AAPL"] and not default.exists()
    ingest_flow.fn(source="skfolio", tickers=["KO"])
    assert _stored_tickers(default) == ["KO"]


@pytest.mark.parametrize("step", ["flow", "task"])
def test_a_changed_close_is_refused_and_a_busy_warehouse_fails_at_once_by_default(tmp_path, step):
    """``replace`` defaults to False (a changed close refuses the load) and
    ``lock_timeout`` to 0, in the flow and in its store task alike."""
    warehouse = tmp_path / "w.duckdb"
    ingest_flow.fn(source="file", path=str(_price_file(tmp_path)), warehouse=str(warehouse))
    changed = _price_file(tmp_path / "changed", closes=[*range(100, 129), 500])

    def load() -> None:
        if step == "flow":
            ingest_flow.fn(source="file", path=str(changed), warehouse=str(warehouse))
        else:
            store.fn(read_price_file(str(changed)), "changed", str(warehouse))

    with pytest.raises(TsrateError, match="would change stored price history, nothing was stored"):
        load()
    assert _rows(warehouse, "select max(close) from raw.prices") == [(129.0,)]
    with another_writer(warehouse), pytest.raises(WarehouseBusy) as failed:
        load()
    assert "after waiting" not in str(failed.value)


# --- flows/build.py -------------------------------------------------------------------------


def test_the_build_takes_the_lock_of_the_warehouse_given_else_tsrate_warehouse_at_once(
    tmp_path, monkeypatch
):
    """Both warehouses busy: the error names the one the build was for, and comes at once
    (``lock_timeout`` defaults to 0); no dbt is started."""
    given, default = tmp_path / "given" / "w.duckdb", tmp_path / "default" / "w.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(default))
    held = []
    try:
        for warehouse in (given, default):
            warehouse.parent.mkdir()
            fd = os.open(lock_path(warehouse), os.O_RDWR | os.O_CREAT, 0o644)
            held.append(fd)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for warehouse, named in ((str(given), given), (None, default)):
            with pytest.raises(WarehouseBusy) as failed:
                build_flow.fn(run_id="r", warehouse=warehouse)
            assert f"the warehouse {named} is being written" in str(failed.value)
            assert "after waiting" not in str(failed.value)
    finally:
        for fd in held:
            os.close(fd)
