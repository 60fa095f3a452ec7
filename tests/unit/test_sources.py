"""Price sources and their validation: every bad input names file, ticker and problem."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from tsrate.robustness.sources import (
    PriceValidationError,
    load_skfolio_sp500,
    load_yfinance,
    read_price_file,
    validate_prices,
)


def write_csv(path, text):
    path.write_text(text)
    return path


GOOD = "ticker,date,close\nAAA,2022-01-03,10\nAAA,2022-01-04,11\nBBB,2022-01-03,5\nBBB,2022-01-04,5.5\n"


def test_reads_good_csv(tmp_path):
    frame = read_price_file(write_csv(tmp_path / "p.csv", GOOD))
    assert list(frame.columns) == ["ticker", "price_date", "close"]
    assert len(frame) == 4
    assert frame["price_date"].iloc[0] == dt.date(2022, 1, 3)
    assert frame["close"].dtype == float


def test_reads_parquet(tmp_path):
    frame = pd.DataFrame(
        {"ticker": ["AAA", "AAA"], "date": ["2022-01-03", "2022-01-04"], "close": [1.0, 2.0]}
    )
    path = tmp_path / "p.parquet"
    frame.to_parquet(path)
    assert len(read_price_file(path)) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD + "AAA,2022-01-04,12\n", "duplicate (ticker, date)"),
        ("ticker,date,close\nAAA,2022-01-03,abc\n", "non-numeric close"),
        ("ticker,date,close\nAAA,2022-01-03,-1\n", "non-positive close"),
        ("ticker,date,close\nAAA,2022-01-03,0\n", "non-positive close"),
        ("ticker,date,close\nAAA,2022-01-03,\n", "missing close"),
        ("ticker,date,close\nAAA,not-a-date,1\n", "unparseable date"),
        ("ticker,day,close\nAAA,2022-01-03,1\n", "missing column(s) ['date']"),
        ("ticker,date,close\n", "no price rows"),
        (GOOD + "AAA,2022-01-05,12\nBBB,2022-01-06,6\nAAA,2022-01-06,12\n", "BBB: gap"),
        ("ticker,date,close\nAAA,2022-01-03,1\nAAA,2022-03-03,1\n", "AAA: gap"),
    ],
)
def test_rejects_bad_files_with_clear_message(tmp_path, text, expected):
    path = write_csv(tmp_path / "bad.csv", text)
    with pytest.raises(PriceValidationError) as info:
        read_price_file(path)
    message = str(info.value)
    assert expected in message
    assert str(path) in message and "nothing was stored" in message


def test_messages_name_the_ticker_and_row(tmp_path):
    path = write_csv(
        tmp_path / "bad.csv", "ticker,date,close\nAAA,2022-01-03,1\nQQQ,2022-01-03,x1\n"
    )
    message = str(pytest.raises(PriceValidationError, read_price_file, path).value)
    assert "row 3" in message and "ticker=QQQ" in message and "'x1'" in message


def test_empty_file_and_missing_file(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert "file is empty" in str(pytest.raises(PriceValidationError, read_price_file, empty).value)
    missing = tmp_path / "nope.csv"
    assert "does not exist" in str(
        pytest.raises(PriceValidationError, read_price_file, missing).value
    )
    odd = tmp_path / "prices.xlsx"
    odd.write_text("x")
    assert "unknown file type" in str(
        pytest.raises(PriceValidationError, read_price_file, odd).value
    )


def test_skfolio_sample_is_real_and_complete():
    frame = load_skfolio_sp500(["AAPL", "MSFT"])
    assert set(frame["ticker"]) == {"AAPL", "MSFT"}
    assert frame["price_date"].min() == dt.date(1990, 1, 2)
    assert frame["price_date"].max() == dt.date(2022, 12, 28)
    assert (frame["close"] > 0).all()


def test_skfolio_unknown_ticker():
    with pytest.raises(Exception, match="unknown tickers \\['ZZZZ'\\]"):
        load_skfolio_sp500(["AAPL", "ZZZZ"])


def fake_yfinance(tickers, start, end, **kwargs):
    """Shaped like yfinance.download(auto_adjust=True): columns (Price, Ticker), NaN padding."""
    dates = pd.bdate_range(start, pd.Timestamp(end) - pd.Timedelta(days=1), name="Date")
    columns = pd.MultiIndex.from_product(
        [["Close", "High", "Low", "Open", "Volume"], tickers], names=["Price", "Ticker"]
    )
    data = np.arange(len(dates) * len(columns), dtype=float).reshape(len(dates), len(columns)) + 1
    frame = pd.DataFrame(data, index=dates, columns=columns)
    frame.iloc[0, 1] = np.nan  # second ticker starts a day later
    return frame


def test_yfinance_with_substituted_download():
    calls = {}

    def download(tickers, **kwargs):
        calls.update(kwargs, tickers=tickers)
        return fake_yfinance(tickers, kwargs["start"], kwargs["end"])

    frame = load_yfinance(["AAA", "BBB"], "2022-01-03", "2022-01-07", download=download)
    assert calls["end"] == "2022-01-08"  # inclusive end becomes yfinance's exclusive end
    assert calls["auto_adjust"] is True
    assert set(frame["ticker"]) == {"AAA", "BBB"}
    assert frame.groupby("ticker").size().to_dict() == {"AAA": 5, "BBB": 4}


def test_yfinance_unknown_ticker():
    def download(tickers, **kwargs):
        frame = fake_yfinance(tickers, kwargs["start"], kwargs["end"])
        frame.loc[:, ("Close", "NOPE")] = np.nan
        return frame

    with pytest.raises(PriceValidationError, match="no prices returned for \\['NOPE'\\]"):
        load_yfinance(["AAA", "NOPE"], "2022-01-03", "2022-01-07", download=download)


def test_validate_lists_every_problem():
    frame = pd.DataFrame(
        {
            "ticker": ["A", "A", "B"],
            "price_date": ["2022-01-03", "bad", "2022-01-03"],
            "close": ["1", "2", "-3"],
        }
    )
    error = pytest.raises(PriceValidationError, validate_prices, frame, "test").value
    assert len(error.problems) == 2


# -- strict rules: tickers, bounds, date range, time zones, column names and types ------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "ticker,date,close\nAAA,2022-01-03,1e12\n",
            "implausible close value(s) (outside 1e-06 to 1e+08): row 2",
        ),
        ("ticker,date,close\nAAA,2022-01-03,1e-300\n", "implausible close value(s)"),
        ("ticker,date,close\nAAA,1850-01-03,10\n", "date(s) outside 1900-01-01 to "),
        ("ticker,date,close\nAAA,9021-01-04,10\n", "date=9021-01-04"),
        (
            "ticker,date,close\nAA\x00A,2022-01-03,10\n",
            "malformed ticker(s), e.g. row 2 (ticker=AA\\x00A",
        ),
        (
            "ticker,date,close\n../../EVIL,2022-01-03,10\n",
            "malformed ticker(s), e.g. row 2 (ticker=../../EVIL",
        ),
        ("ticker,date,close\nA B,2022-01-03,10\n", "malformed ticker"),
        (f"ticker,date,close\n{'A' * 21},2022-01-03,10\n", "malformed ticker"),
        ("ticker,date,close,close\nAAA,2022-01-03,10,11\n", "duplicated column name(s) ['close']"),
        ("ticker,date,Close,close\nAAA,2022-01-03,10,11\n", "duplicated column name(s) ['close']"),
        (
            "ticker,date,close\nAAA,2022-01-03T00:00:00+00:00,10\nAAA,2022-01-04T00:00:00-05:00,11\n",
            "the dates mix time zones (+00:00 on row 2, -05:00 on row 3)",
        ),
    ],
)
def test_strict_rules_reject_with_one_clear_problem(tmp_path, text, expected):
    path = write_csv(tmp_path / "bad.csv", text)
    with pytest.raises(PriceValidationError) as info:
        read_price_file(path)
    message = str(info.value)
    assert expected in message and str(path) in message
    assert "\x00" not in message


def test_tickers_that_real_markets_use_are_accepted():
    frame = pd.DataFrame(
        {
            "ticker": ["BRK.B", "BF-B", "^GSPC", "EURUSD=X", "T0001", "brk.a"],
            "price_date": ["2022-01-03"] * 6,
            "close": ["1", "2", "3", "4", "5", "600000"],
        }
    )
    stored = validate_prices(frame, "test")
    assert sorted(stored["ticker"]) == ["BF-B", "BRK.A", "BRK.B", "EURUSD=X", "T0001", "^GSPC"]


@pytest.mark.parametrize(
    ("column", "values", "expected"),
    [
        ("close", [True, False], "column 'close' is boolean; it must hold numbers"),
        ("date", [20220103, 20220104], "column 'date' holds int64 values; it must hold dates"),
        ("ticker", [1, 1], "column 'ticker' holds int64 values; it must hold text"),
    ],
)
def test_parquet_columns_of_the_wrong_type_are_rejected(tmp_path, column, values, expected):
    frame = pd.DataFrame(
        {"ticker": ["AAA", "AAA"], "date": ["2022-01-03", "2022-01-04"], "close": [1.0, 2.0]}
    )
    frame[column] = values
    path = tmp_path / "p.parquet"
    frame.to_parquet(path)
    assert expected in str(pytest.raises(PriceValidationError, read_price_file, path).value)


def test_parquet_with_a_duplicated_column_is_rejected(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        [pa.array(["AAA"]), pa.array(["2022-01-03"]), pa.array([1.0]), pa.array([2.0])],
        names=["ticker", "date", "close", "close"],
    )
    path = tmp_path / "dup.parquet"
    pq.write_table(table, path)
    message = str(pytest.raises(PriceValidationError, read_price_file, path).value)
    assert "duplicated column name(s) ['close']" in message
    timestamps = pd.DataFrame(  # one zone is fine: the local dates are kept
        {
            "ticker": ["AAA", "AAA"],
            "date": pd.to_datetime(["2022-01-03", "2022-01-04"]).tz_localize("America/New_York"),
            "close": [1.0, 2.0],
        }
    )
    timestamps.to_parquet(tmp_path / "tz.parquet")
    read = read_price_file(tmp_path / "tz.parquet")
    assert read["price_date"].tolist() == [dt.date(2022, 1, 3), dt.date(2022, 1, 4)]


def test_the_skfolio_sample_read_from_its_file_equals_skfolios_own_loader():
    """tsrate reads skfolio's S&P 500 file without importing skfolio (1.2 s of scikit-learn
    and SciPy): the frame must be exactly what ``load_sp500_dataset`` returns."""
    from skfolio.datasets import load_sp500_dataset

    from tsrate.robustness.sources import _skfolio_sp500_wide

    ours, theirs = _skfolio_sp500_wide(), load_sp500_dataset()
    pd.testing.assert_frame_equal(ours, theirs, check_exact=True)
    assert ours.shape == (8313, 20)


def test_blank_closes_are_found_the_same_way_for_numbers_and_text():
    """The numeric fast path of ``_blank`` (only NaN is missing) agrees with the text path
    on the same values, and a malformed ticker is counted on every row that repeats it."""
    from tsrate.robustness.sources import PriceValidationError, _blank, validate_prices

    numbers = pd.Series([1.5, np.nan, 0.0, -2.0, np.inf, 1e12, np.nan])
    assert _blank(numbers).tolist() == _blank(numbers.astype(object)).tolist()
    assert _blank(numbers).tolist() == [False, True, False, False, False, False, True]
    text = pd.Series(["1.5", " ", "nan", "NULL", None, "None", "x"])
    assert _blank(text).tolist() == [False, True, True, True, True, True, False]

    frame = pd.DataFrame(
        {
            "ticker": ["A B", "A B", "A B", "OK"],
            "price_date": ["2022-01-03", "2022-01-04", "2022-01-05", "2022-01-03"],
            "close": [1.0, np.nan, 2.0, 3.0],
        }
    )
    with pytest.raises(PriceValidationError) as caught:
        validate_prices(frame, source="test")
    assert "3 malformed ticker(s)" in str(caught.value)
    assert "1 missing close value(s)" in str(caught.value)
    assert "non-numeric" not in str(caught.value)
