"""`tsrate serve`'s log lines carry the date: a serve log spans nights, and Prefect's own
format stamps the time of day only. Checked with Prefect's own loader of its logging
configuration (the same call Prefect makes when it sets up logging)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import prefect.logging.configuration as prefect_logging

from tsrate.platform.serve import DATED_LOGS, date_the_logs

DEFAULT_CONFIG = Path(prefect_logging.__file__).with_name("logging.yml")


def _formatter_dates(monkeypatch, environ: dict[str, str]) -> dict[str, str]:
    for variable in DATED_LOGS:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in environ.items():
        monkeypatch.setenv(variable, value)
    config = prefect_logging.load_logging_config(DEFAULT_CONFIG)
    return {name: config["formatters"][name]["datefmt"] for name in ("standard", "simple")}


def test_prefects_default_format_has_no_date(monkeypatch):
    assert _formatter_dates(monkeypatch, {}) == {"standard": "%H:%M:%S", "simple": "%H:%M:%S"}


def test_serve_dates_both_formats(monkeypatch):
    environ: dict[str, str] = {}
    date_the_logs(environ)
    dates = _formatter_dates(monkeypatch, environ)
    stamp = time.strftime(dates["standard"], time.gmtime(0))
    assert stamp == "1970-01-01 00:00:00"
    assert dates["simple"] == dates["standard"]
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "ingest: started", None, None)
    line = logging.Formatter("%(asctime)s | %(message)s", dates["standard"]).format(record)
    assert line.startswith(time.strftime("%Y-%m-%d ", time.localtime(record.created)))


def test_a_users_own_format_is_kept():
    environ = {"PREFECT_LOGGING_FORMATTERS_STANDARD_DATEFMT": "%d/%m %H:%M"}
    date_the_logs(environ)
    assert environ["PREFECT_LOGGING_FORMATTERS_STANDARD_DATEFMT"] == "%d/%m %H:%M"
    assert environ["PREFECT_LOGGING_FORMATTERS_SIMPLE_DATEFMT"] == "%Y-%m-%d %H:%M:%S"
