"""Price ingestion's checks at their edges (``tsrate.robustness.sources``).

A mutation sweep of the module (every comparison, number and and/or changed one at a time)
left these untested: each bound is inclusive at the value the docstrings and messages state
(a 10-day hole allowed, 11 not; a close of exactly 1e-6 or 1e8 accepted; the first and last
accepted dates), each problem is counted over the offending rows only (a file mixing good
and bad rows), the messages point at the right row and show the first three missing days,
Yahoo Finance's download is asked for adjusted closes with an inclusive end, and a CSV's
"NA" is a ticker, not a missing value. Every expectation is the stated rule applied by hand.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from tsrate.robustness.sources import (
    EARLIEST_DATE,
    MAX_CLOSE,
    MIN_CLOSE,
    PriceValidationError,
    latest_date,
    load_yfinance,
    read_price_file,
    validate_prices,
)


def frame(rows):
    return pd.DataFrame(rows, columns=["ticker", "price_date", "close"])


def problems(rows, **options) -> str:
    with pytest.raises(PriceValidationError) as caught:
        validate_prices(frame(rows), source="test", **options)
    return str(caught.value)


def two_rows_apart(days: int):
    start = dt.date(2022, 1, 3)
    return [("AAA", start, 10.0), ("AAA", start + dt.timedelta(days=days), 11.0)]


def test_the_default_gap_allows_ten_calendar_days_and_not_eleven(tmp_path):
    """Docstring: a gap is 'two consecutive rows more than max_gap_days calendar days apart',
    the default 10 (markets never close that long); read_price_file uses the default."""
    for days, ok in ((10, True), (11, False)):
        path = tmp_path / f"gap{days}.csv"
        rows = "".join(f"{t},{d},{c}\n" for t, d, c in two_rows_apart(days))
        path.write_text("ticker,date,close\n" + rows)
        if ok:
            assert len(read_price_file(path)) == 2
        else:
            with pytest.raises(PriceValidationError, match="11 calendar days without a price"):
                read_price_file(path)
    assert len(validate_prices(frame(two_rows_apart(4)), "test", max_gap_days=4)) == 2
    assert "(more than 3)" in problems(two_rows_apart(4), max_gap_days=3)


def test_the_first_and_last_accepted_dates_are_accepted_and_one_day_beyond_is_not():
    first, last = EARLIEST_DATE, latest_date()
    ok = validate_prices(frame([("AAA", first, 1.0)]), "test")
    assert ok["price_date"].tolist() == [first]
    ok = validate_prices(frame([("BBB", last, 1.0)]), "test")
    assert ok["price_date"].tolist() == [last]
    for beyond in (first - dt.timedelta(days=1), last + dt.timedelta(days=1)):
        assert "1 date(s) outside" in problems([("AAA", beyond, 1.0)])
    # a file mixing good and bad dates: only the bad row is counted
    message = problems([("AAA", first, 1.0), ("AAA", first - dt.timedelta(days=1), 1.0)])
    assert "1 date(s) outside" in message


def test_the_plausible_close_bounds_are_inclusive_and_each_problem_counts_its_rows():
    for close in (MIN_CLOSE, MAX_CLOSE):
        assert validate_prices(frame([("AAA", "2022-01-03", close)]), "test")["close"][0] == close
    for close in (MIN_CLOSE / 2, MAX_CLOSE * 1.5):
        assert "1 implausible close value(s)" in problems([("AAA", "2022-01-03", close)])
    good = ("AAA", "2022-01-03", 10.0)
    assert "1 implausible" in problems([good, ("AAA", "2022-01-04", MAX_CLOSE * 2)])
    assert "1 infinite close" in problems([good, ("AAA", "2022-01-04", float("inf"))])
    assert "1 row(s) without a ticker (first at row 3)" in problems(
        [good, (" ", "2022-01-04", 10.0)]
    )
    # a zero close is non-positive, and only that (not also implausible)
    message = problems([good, ("AAA", "2022-01-04", 0.0)])
    assert "1 non-positive close" in message and "implausible" not in message


def test_a_duplicate_is_shown_by_its_first_ticker_and_date():
    rows = [
        ("BBB", "2022-01-05", 1.0),
        ("BBB", "2022-01-05", 1.0),
        ("AAA", "2022-01-04", 1.0),
        ("AAA", "2022-01-04", 2.0),
        ("AAA", "2022-01-03", 2.0),
    ]
    assert "4 duplicate (ticker, date) row(s), e.g. AAA 2022-01-04" in problems(rows)


def test_the_gap_message_lists_the_first_three_missing_days():
    days = [dt.date(2022, 1, d) for d in (3, 4, 5, 6, 7)]
    full = [("AAA", d, 1.0) for d in days]
    three = full + [("BBB", days[0], 1.0), ("BBB", days[4], 1.0)]
    assert (
        "3 trading day(s) present for other tickers are missing (2022-01-04, 2022-01-05, 2022-01-06)"
        in problems(three)
    )
    four = full + [("BBB", days[0], 1.0), ("BBB", dt.date(2022, 1, 8), 1.0)]
    four = four + [("AAA", dt.date(2022, 1, 8), 1.0)]
    assert (
        "4 trading day(s) present for other tickers are missing (2022-01-04, 2022-01-05, 2022-01-06, …)"
        in problems(four)
    )


def test_mixed_utc_offsets_are_one_problem_not_a_traceback():
    rows = [("AAA", "2022-01-03T00:00:00+01:00", 1.0), ("AAA", "2022-01-04T00:00:00+02:00", 1.0)]
    with pytest.raises(PriceValidationError):
        validate_prices(frame(rows), "test")


def test_na_in_a_csv_is_a_ticker_and_a_file_with_both_date_columns_reads_price_date(tmp_path):
    """pandas reads "NA" as missing by default; a price file's NA is a ticker."""
    path = tmp_path / "na.csv"
    path.write_text("ticker,date,close\nNA,2022-01-03,10\nNA,2022-01-04,11\n")
    assert read_price_file(path)["ticker"].tolist() == ["NA", "NA"]
    path = tmp_path / "both.csv"
    path.write_text("ticker,date,price_date,close\nAAA,2021-05-05,2022-01-03,10\n")
    assert read_price_file(path)["price_date"].tolist() == [dt.date(2022, 1, 3)]


class Download:
    """yfinance.download's shape: records its arguments, returns the frame it was given."""

    def __init__(self, result):
        self.result, self.calls = result, []

    def __call__(self, tickers, **options):
        self.calls.append((tickers, options))
        return self.result


def test_yahoo_is_asked_for_adjusted_closes_quietly_with_the_end_day_included():
    index = pd.to_datetime(["2022-01-03", "2022-01-04"])
    download = Download(pd.DataFrame({"Close": [10.0, 11.0]}, index=index))
    prices = load_yfinance(["AAA"], "2022-01-03", "2022-01-04", download=download)
    assert prices["ticker"].tolist() == ["AAA", "AAA"]
    assert prices["close"].tolist() == [10.0, 11.0]
    (tickers, options), *_ = download.calls
    assert tickers == ["AAA"]
    assert options == {
        "start": "2022-01-03",
        "end": "2022-01-05",
        "auto_adjust": True,
        "progress": False,
        "group_by": "column",
    }
    # one flat frame for two tickers cannot say which is which
    with pytest.raises(PriceValidationError, match="unexpected columns"):
        load_yfinance(["AAA", "BBB"], "2022-01-03", "2022-01-04", download=download)
    with pytest.raises(PriceValidationError, match="returned no rows"):
        load_yfinance(["AAA"], "2022-01-03", "2022-01-04", download=Download(pd.DataFrame()))


def test_a_message_shows_a_value_up_to_40_characters_and_three_rows_at_most():
    """_shown: a value of 40 characters whole, a longer one cut to 39 and an ellipsis;
    _examples: three offending rows, then an ellipsis when there are more."""
    whole, long = "x" * 40, "y" * 41
    message = problems([("AAA", whole, 1.0), ("AAA", long, 1.0)])
    assert f"date={whole}, close=1.0)" in message  # numpy's repr would say np.float64(1.0)
    assert f"date={'y' * 39}…, close" in message and "y" * 40 not in message
    rows = [("AAA", f"bad{i}", 1.0) for i in range(3)]
    message = problems(rows)
    assert "row 4 (ticker=AAA, date=bad2" in message and "…" not in message
    message = problems(rows + [("AAA", "bad3", 1.0)])
    assert "4 unparseable date(s)" in message and "bad3" not in message
    assert message.rstrip().endswith("…")


def test_the_latest_accepted_date_is_366_days_after_today():
    """latest_date's docstring: one year after today (366 days, a leap year's too)."""
    today = dt.date.today()
    assert validate_prices(frame([("AAA", today - dt.timedelta(days=400), 1.0)]), "t") is not None
    accepted = validate_prices(frame([("AAA", today + dt.timedelta(days=366), 1.0)]), "t")
    assert accepted["price_date"].tolist() == [today + dt.timedelta(days=366)]
    assert "1 date(s) outside" in problems([("AAA", today + dt.timedelta(days=367), 1.0)])


def test_a_time_zone_mix_names_the_first_three_offsets_with_their_rows():
    from tsrate.robustness.sources import mixed_zone_problem

    values = pd.Series(
        ["2022-01-03T00:00:00+01:00", "2022-01-04T00:00:00+01:00", "2022-01-05", "2022-01-06Z"]
        + ["2022-01-07T00:00:00+03:00"]
    )
    message = mixed_zone_problem(values, "row", 2)
    assert "(+01:00 on row 2, none on row 4, Z on row 5)" in message
    assert "+03:00" not in message
    two = mixed_zone_problem(values[:3], "line", 10)
    assert "(+01:00 on line 10, none on line 12)" in two


def test_a_parquet_close_column_holding_a_boolean_among_numbers_is_refused():
    from tsrate.robustness.sources import parquet_type_problems

    mixed = pd.DataFrame({"close": pd.Series([1.5, True, 2.0], dtype=object)})
    assert parquet_type_problems(mixed, ["close"], [], []) == [
        "column 'close' is boolean; it must hold numbers"
    ]
    numbers = pd.DataFrame({"close": pd.Series([1.5, 2, 2.0], dtype=object)})
    assert parquet_type_problems(numbers, ["close"], [], []) == []
