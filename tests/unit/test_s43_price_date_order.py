"""Price files with dates written nn/nn/yyyy are read in one order, never value by value
(tsrate.robustness.sources.validate_prices).

pandas' ``format="mixed"`` reads each value alone, month first unless that is impossible, so
a day-first file had 01/02/2023 read as 2 January beside 13/02/2023 as 13 February (or was
refused for a 31-day "gap"). Each case is checked against the dates written out by hand.
"""

from __future__ import annotations

import pandas as pd
import pytest

from tsrate.robustness.sources import PriceValidationError, validate_prices


def _frame(dates: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "ticker": ["AAA"] * len(dates),
            "price_date": dates,
            "close": [10.0 + i for i in range(len(dates))],
        }
    )


def _read(dates: list[str]) -> list[str]:
    out = validate_prices(_frame(dates), "prices.csv")
    return [d.strftime("%Y-%m-%d") for d in out.sort_values("price_date")["price_date"]]


WEEKDAYS = [d for d in pd.bdate_range("2023-01-09", "2023-01-27")]


@pytest.mark.parametrize("sep", ["/", ".", "-"])
def test_a_day_first_file_is_read_day_first_throughout(sep):
    written = [f"{d.day:02d}{sep}{d.month:02d}{sep}{d.year}" for d in WEEKDAYS]
    assert _read(written) == [d.strftime("%Y-%m-%d") for d in WEEKDAYS]


def test_a_month_first_file_is_read_month_first_throughout():
    written = [f"{d.month}/{d.day}/{d.year}" for d in WEEKDAYS]
    assert _read(written) == [d.strftime("%Y-%m-%d") for d in WEEKDAYS]


def test_a_file_whose_order_cannot_be_told_is_refused_with_a_hint():
    written = [f"{d:02d}/02/2023" for d in (1, 2, 3, 6, 7, 8, 9, 10)]
    with pytest.raises(PriceValidationError) as caught:
        validate_prices(_frame(written), "prices.csv")
    message = str(caught.value)
    assert "whose order the file does not tell" in message
    assert "YYYY-MM-DD" in message and "01/02/2023" in message


def test_a_file_mixing_both_orders_is_refused():
    with pytest.raises(PriceValidationError, match="both day/month/year and month/day/year"):
        validate_prices(_frame(["13/01/2023", "01/16/2023"]), "prices.csv")


def test_iso_dates_and_equal_day_and_month_are_untouched():
    assert _read(["2023-01-02", "2023-01-03"]) == ["2023-01-02", "2023-01-03"]
    assert _read(["01/01/2024", "2024-01-02"]) == ["2024-01-01", "2024-01-02"]


def test_a_missing_column_message_names_the_files_own_columns(tmp_path):
    from tsrate.robustness.sources import read_price_file

    path = tmp_path / "prices.csv"
    path.write_text("ticker,date,price\nAAPL,2022-01-03,1\n")
    with pytest.raises(PriceValidationError) as caught:
        read_price_file(path)
    assert "found ['ticker', 'date', 'price']" in str(caught.value)
    assert "price_date" not in str(caught.value)


def test_a_month_first_december_is_not_taken_for_day_first():
    """12 is a month as much as a day: only a number above 12 tells the order."""
    december = list(pd.bdate_range("2023-12-04", "2023-12-22"))
    written = [f"{d.month}/{d.day}/{d.year}" for d in december]
    assert _read(written) == [d.strftime("%Y-%m-%d") for d in december]
    assert _read([f"{d.day}/12/{d.year}" for d in december]) == [
        d.strftime("%Y-%m-%d") for d in december
    ]
