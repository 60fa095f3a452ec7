"""The mutation sweep of the nn/nn/yyyy date-order rule of price files
(tsrate.robustness.sources.validate_prices; tests/planted/s44_sweep.json): a file mixing
ISO and day-first dates, a day or month of 13 as the only sign of the order, and the cut of
a long value quoted in a message. Expected dates are written out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from tsrate.robustness.sources import PriceValidationError, validate_prices

#: Monday 9 to Friday 13 January 2023
WEEK = ["2023-01-09", "2023-01-10", "2023-01-11", "2023-01-12", "2023-01-13"]


def _frame(dates: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"ticker": "AAA", "price_date": dates, "close": [10.0 + i for i in range(len(dates))]}
    )


def _read(dates: list[str]) -> list[str]:
    out = validate_prices(_frame(dates), "prices.csv")
    return [d.strftime("%Y-%m-%d") for d in out.sort_values("price_date")["price_date"]]


def test_day_first_dates_beside_iso_ones_are_read_in_the_files_order():
    """One ISO date, then 10/01 .. 13/01/2023: 13 tells day first, so 10/01/2023 is 10
    January (read value by value, month first, it would be 1 October)."""
    written = ["2023-01-09", "10/01/2023", "11/01/2023", "12/01/2023", "13/01/2023"]
    assert _read(written) == WEEK


def test_a_day_of_13_alone_tells_day_first():
    assert _read(["09/01/2023", "10/01/2023", "11/01/2023", "12/01/2023", "13/01/2023"]) == WEEK


def test_a_day_of_13_alone_tells_month_first():
    assert _read(["01/09/2023", "01/10/2023", "01/11/2023", "01/12/2023", "01/13/2023"]) == WEEK


def test_a_long_value_is_quoted_whole_up_to_40_characters_and_cut_after():
    """Two unparseable dates: 40 characters are shown as written, 41 as their first 39 and
    an ellipsis (40 characters in all)."""
    fits, cut = "x" * 40, "y" * 41
    with pytest.raises(PriceValidationError) as caught:
        validate_prices(_frame([fits, cut]), "prices.csv")
    message = str(caught.value)
    assert f"date={fits}," in message
    assert f"date={'y' * 39}…," in message
