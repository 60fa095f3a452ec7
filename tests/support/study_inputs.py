"""A valid small study as the config file spells it, and random-walk prices on business days,
for the study-check tests; one ticker's study and series, for the tests that plan its
stored partitions (their keys). No test here."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tsrate.config import Study
from tsrate.robustness.forecast.plan import TickerSeries

#: a valid small study on the default tickers (the bundled sample holds them)
SMALL = dict(
    study_tickers="AAPL,MSFT",
    study_start="2022-06-01",
    study_end="2022-12-28",
    context_length=40,
    horizon=10,
    systems="naive,biased",
    perturbations="P0,P1",
)


def walk_prices(ticker: str, start: str, days: int) -> pd.DataFrame:
    dates = pd.bdate_range(start, periods=days)
    close = 100 + np.cumsum(np.random.default_rng(0).normal(0, 1, days))
    return pd.DataFrame({"ticker": ticker, "price_date": dates.date, "close": close})


def one_ticker_study(systems: str) -> Study:
    """AAA alone from 2022-01-03 to 2022-02-28, windows of 20 days forecast 5 ahead, P0."""
    return Study.from_mapping(
        dict(
            study_tickers="AAA",
            study_start="2022-01-03",
            study_end="2022-02-28",
            context_length=20,
            horizon=5,
            systems=systems,
            perturbations="P0",
        )
    )


def one_ticker_series() -> TickerSeries:
    """AAA's prices for :func:`one_ticker_study`: a straight line from 100 to 120 on every
    calendar day, with forecast origins at positions 30 and 40."""
    dates = np.arange(np.datetime64("2022-01-03"), np.datetime64("2022-03-01"))
    return TickerSeries("AAA", dates, np.linspace(100, 120, len(dates)), np.array([30, 40]))
