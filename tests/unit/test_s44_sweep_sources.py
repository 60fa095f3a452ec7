"""The mutation sweep of the price-file reader (tsrate.robustness.sources;
tests/planted/s44_sweep.json): the nn/nn/yyyy date-order rule on a file mixing ISO and
day-first dates and on a day or month of 13 as the only sign of the order, the cut of a
long value quoted in a message, and a file with both ``date`` and ``price_date``. Expected
dates are written out by hand."""

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


def test_a_file_with_both_date_and_price_date_reads_price_date(tmp_path):
    """``date`` is only another name for ``price_date``: beside a price_date column it is
    left alone, and the prices keep their price_date (9 and 10 January 2023)."""
    from tsrate.robustness.sources import read_price_file

    path = tmp_path / "prices.csv"
    path.write_text(
        "ticker,date,price_date,close\nAAA,1999-01-01,2023-01-09,10\nAAA,1999-01-04,2023-01-10,11\n"
    )
    out = read_price_file(path)
    assert list(out.columns) == ["ticker", "price_date", "close"]
    assert [d.strftime("%Y-%m-%d") for d in pd.to_datetime(out["price_date"])] == WEEK[:2]
