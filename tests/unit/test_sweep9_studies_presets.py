"""The preset's price check (``tsrate.robustness.presets``) at the edges a mutation sweep
found untested.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_studies.json). What is pinned: the trading days the bundled S&P sample
gives each ticker (counted here straight from its gzipped CSV with pandas), 0 for a
ticker with no close in the period (from the sample or from a file, never 1), the window
that a missing ``context_length`` / ``horizon`` falls back to (the project's own vars in
``dbt_project.yml``), the strict "fewer than context_length + horizon days" rule at exactly
that many days, a ticker with no prices at all missing even when the window asks for a
single day, and the refusal naming the number of days it needs.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tsrate.config import project_dir
from tsrate.robustness.presets import (
    PresetPricesError,
    missing_prices,
    preset_values,
    price_days,
    require_preset_prices,
)
from tsrate.robustness.sample import skfolio_sample_path


def _file(path: Path, days: dict[str, list[pd.Timestamp]]) -> Path:
    rows = [
        {"ticker": t, "date": d.strftime("%Y-%m-%d"), "close": 100.0 + i}
        for t, dates in days.items()
        for i, d in enumerate(dates)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _sample_counts(start: str, end: str) -> dict[str, int]:
    """Closes per ticker of the bundled sample in [start, end], read with pandas."""
    frame = pd.read_csv(skfolio_sample_path(), index_col=0)
    dates = pd.to_datetime(frame.index.astype(str).str[:10])
    inside = frame[(dates >= pd.Timestamp(start)) & (dates <= pd.Timestamp(end))]
    return {str(t): int(inside[t].notna().sum()) for t in frame.columns}


def test_the_bundled_sample_gives_each_ticker_its_trading_days(tmp_path):
    absent = tmp_path / "absent.duckdb"
    start, end = dt.date(2022, 6, 1), dt.date(2022, 12, 28)
    expected = _sample_counts("2022-06-01", "2022-12-28")
    assert expected["AAPL"] > 100  # about seven months of closes
    for source in ("skfolio", "auto"):
        assert price_days(source, None, absent, start, end) == expected
    values = {"study_tickers": "AAPL,META", "study_start": str(start), "study_end": str(end)}
    assert missing_prices(
        {**values, "context_length": 80, "horizon": 20}, "auto", None, absent
    ) == ["META"]


def test_a_ticker_with_no_close_in_the_period_has_zero_days(tmp_path):
    absent = tmp_path / "absent.duckdb"
    before = price_days("skfolio", None, absent, dt.date(1985, 1, 1), dt.date(1985, 12, 31))
    assert before and set(before.values()) == {0}
    path = _file(
        tmp_path / "p.csv",
        {"AAA": list(pd.bdate_range("2023-01-02", periods=5)),
         "BBB": list(pd.bdate_range("2023-03-01", periods=5))},
    )  # fmt: skip
    got = price_days("file", path, absent, dt.date(2023, 1, 1), dt.date(2023, 1, 31))
    assert got == {"AAA": 5, "BBB": 0}


def _vars() -> dict:
    with open(project_dir() / "dbt_project.yml") as handle:
        return yaml.safe_load(handle)["vars"]


def test_without_a_window_the_check_needs_the_projects_context_and_horizon(tmp_path):
    needed = int(_vars()["context_length"]) + int(_vars()["horizon"])
    days = pd.bdate_range("2023-01-02", periods=needed)
    path = _file(tmp_path / "p.csv", {"FULL": list(days), "SHORT": list(days[1:])})
    values = {
        "study_tickers": "FULL,SHORT",
        "study_start": "2023-01-01",
        "study_end": str(days[-1].date()),
    }
    absent = tmp_path / "absent.duckdb"
    assert missing_prices(values, "file", path, absent) == ["SHORT"]  # needed - 1 days
    with pytest.raises(PresetPricesError, match=f"\\(at least {needed} trading days each\\)"):
        require_preset_prices("paper", values, "file", path, absent)


def test_a_ticker_without_prices_is_missing_even_for_a_one_day_window(tmp_path):
    path = _file(tmp_path / "p.csv", {"ONE": [pd.Timestamp("2023-01-03")]})
    values = {
        "study_tickers": "ONE,NONE",
        "study_start": "2023-01-01",
        "study_end": "2023-01-31",
        "context_length": 1,
        "horizon": 0,
    }
    assert missing_prices(values, "file", path, tmp_path / "absent.duckdb") == ["NONE"]


def test_the_refusal_names_the_days_the_window_needs(tmp_path):
    values = preset_values("paper", {"context_length": 50, "horizon": 7})
    with pytest.raises(PresetPricesError) as caught:
        require_preset_prices("paper", values, "skfolio", None, tmp_path / "absent.duckdb")
    message = str(caught.value)
    assert "(at least 57 trading days each)" in message
    assert "over 2023-03-28..2024-04-22" in message and "\n" not in message
