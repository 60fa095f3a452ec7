"""A valid small study as the config file spells it, and random-walk prices on business days,
for the study-check tests. No test here."""

from __future__ import annotations

import numpy as np
import pandas as pd

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
