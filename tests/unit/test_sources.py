"""Price sources and their validation: every bad input names file, ticker and problem."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from tsrate.sources import (
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
