"""The study check counts the trading days a ``tsrate run --file`` will have: the stored
prices and the file's, each day once.

The run merges the file into the stored history (``store_prices`` adds a ticker's new days;
overlapping days must repeat the stored close), then cuts the windows from the merged
series. The check counted the file's days alone for every ticker the file holds, so a
small update file (a few new days of a stored ticker) refused a study the run can do:
"ticker 'AAPL' has 30 trading days ..., fewer than context_length + horizon". Expected
counts here are worked out from the business-day calendars of the two halves by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

# the study check's copy of the project (dbt_project.yml and seeds as TSRATE_PROJECT_DIR)
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.study import check_study

STUDY = dict(
    study_tickers="AAPL",
    study_start="2022-06-01",
    study_end="2022-12-28",
    horizon=10,
    systems="naive",
    perturbations="P0,P1",
)


def _history() -> pd.DataFrame:
    """50 business days of AAPL from 2022-06-01 (one series: the halves agree where they meet)."""
    dates = pd.bdate_range("2022-06-01", periods=50)
    close = 100 + np.cumsum(np.random.default_rng(3).normal(0, 1, 50))
    return pd.DataFrame({"ticker": "AAPL", "price_date": dates.date, "close": close})


@pytest.fixture
def stored_and_file(tmp_path) -> tuple[Path, Path]:
    """Days 1-30 stored, days 21-50 in the update file: 10 in both, 50 in all."""
    history = _history()
    warehouse = tmp_path / "warehouse" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    with connect(warehouse) as con:
        store_prices(con, history.iloc[:30].reset_index(drop=True), "stored")
    path = tmp_path / "update.csv"
    history.iloc[20:].rename(columns={"price_date": "date"}).to_csv(path, index=False)
    return warehouse, path


@pytest.mark.usefixtures("project")
def test_an_update_file_adds_its_days_to_the_stored_ones(stored_and_file) -> None:
    warehouse, path = stored_and_file
    # 30 stored + 30 in the file - 10 in both = 50 days = context 40 + horizon 10: one window
    assert check_study({**STUDY, "context_length": 40}, "file", path, warehouse) == []


@pytest.mark.usefixtures("project")
def test_a_day_in_both_counts_once(stored_and_file) -> None:
    warehouse, path = stored_and_file
    problems = check_study({**STUDY, "context_length": 41}, "file", path, warehouse)
    assert len(problems) == 1
    assert "ticker 'AAPL' has 50 trading days in 2022-06-01..2022-12-28" in problems[0]
    assert "fewer than context_length + horizon = 51" in problems[0]


def test_a_preset_counts_the_stored_and_the_file_days_each_once(stored_and_file) -> None:
    """The presets' own price check (``--preset NAME --file``) counts as the study check does:
    30 stored + 30 in the file - 10 in both = 50 (the larger half alone: 30)."""
    from tsrate.robustness.presets import missing_prices

    warehouse, path = stored_and_file
    values = {**STUDY, "context_length": 40}
    assert missing_prices(values, "file", path, warehouse) == []
    assert missing_prices({**values, "context_length": 41}, "file", path, warehouse) == ["AAPL"]
