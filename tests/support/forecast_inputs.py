"""The forecast tests' small study, a warehouse of two tickers priced on different
calendars, and a recorder of the objects a run makes. No test here."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from tsrate.config import Study
from tsrate.platform.warehouse import store_prices


def plan_study(**overrides) -> Study:
    values = dict(
        study_tickers=["AAPL", "MSFT"],
        study_start="2021-01-04",
        study_end="2021-03-31",
        context_length=6,
        horizon=3,
        stride=2,
        perturbations=["P0", "P2"],
        systems=["naive", "biased"],
    )
    values.update(overrides)
    return Study.from_mapping(values)


def priced_warehouse() -> tuple[duckdb.DuckDBPyConnection, dict[str, pd.DataFrame]]:
    """Two tickers with different closes on different calendars (MSFT skips Wednesdays),
    plus days outside the study period on both sides."""
    days = pd.bdate_range("2020-12-21", "2021-04-09")
    frames = {
        "AAPL": pd.DataFrame(
            {"ticker": "AAPL", "price_date": days, "close": 100.0 + np.arange(len(days))}
        ),
        "MSFT": pd.DataFrame(
            {
                "ticker": "MSFT",
                "price_date": days[days.day_of_week != 2],
                "close": 50.0 + 0.5 * np.arange((days.day_of_week != 2).sum()) ** 1.5,
            }
        ),
    }
    con = duckdb.connect(":memory:")
    store_prices(con, pd.concat(frames.values(), ignore_index=True), "test")
    return con, frames


def made_by_the_run(monkeypatch, module, name: str) -> list:
    """Every ``module.<name>`` object the run makes from here on, in order: the class is
    replaced by a subclass that records its instances (nothing else changes)."""
    made: list = []
    base = getattr(module, name)

    class Recorded(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(module, name, Recorded)
    return made
