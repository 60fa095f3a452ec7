"""Ingest never loses history silently: a file adds dates; changing or shrinking stored
history needs ``--replace``, which says what it replaced. Real DuckDB, the real CLI."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from tsrate.cli import main
from tsrate.platform.warehouse import PriceHistoryConflict, connect, store_prices
from tsrate.robustness.sources import load_skfolio_sp500

TICKERS = ["AAPL", "JPM"]


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "tsrate.duckdb"
    with connect(path) as con:
        store_prices(con, load_skfolio_sp500(TICKERS), "skfolio")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    return path


def _stored(path) -> pd.DataFrame:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "select ticker, price_date, close, source from raw.prices order by ticker, price_date"
        ).df()
    finally:
        con.close()


def _tail(stored: pd.DataFrame, ticker: str, n: int) -> pd.DataFrame:
    rows = stored[stored["ticker"] == ticker].tail(n)
    return pd.DataFrame(
        {
            "ticker": ticker,
            "date": rows["price_date"].dt.strftime("%Y-%m-%d"),
            "close": rows["close"],
        }
    )


def _new_days(ticker: str, closes: list[float]) -> pd.DataFrame:
    dates = pd.bdate_range("2022-12-29", periods=len(closes))
    return pd.DataFrame({"ticker": ticker, "date": dates.strftime("%Y-%m-%d"), "close": closes})


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_partial_file_adds_its_new_dates_and_keeps_the_history(warehouse, tmp_path, capsys):
    before = _stored(warehouse)
    n_aapl = int((before["ticker"] == "AAPL").sum())
    assert n_aapl == 8313  # the skfolio sample's AAPL history
    path = tmp_path / "last30.csv"
    pd.concat([_tail(before, "AAPL", 30), _new_days("AAPL", [130.5, 131.25, 129.0])]).to_csv(
        path, index=False
    )
    assert main(["ingest", str(path)]) == 0
    out = capsys.readouterr().out
    assert "3 new rows; 30 already stored for 1 ticker(s) (AAPL)" in out
    after = _stored(warehouse)
    aapl = after[after["ticker"] == "AAPL"]
    assert len(aapl) == n_aapl + 3
    pd.testing.assert_frame_equal(  # every stored row as it was, source included
        aapl.head(n_aapl).reset_index(drop=True),
        before[before["ticker"] == "AAPL"].reset_index(drop=True),
    )
    assert aapl["close"].tail(3).tolist() == [130.5, 131.25, 129.0]
    assert set(aapl["source"].tail(3)) == {str(path)}
    assert (after["ticker"] == "JPM").sum() == (before["ticker"] == "JPM").sum()


def test_a_changed_close_is_refused_naming_the_counts_and_nothing_changes(
    warehouse, tmp_path, capsys
):
    before = _stored(warehouse)
    n_aapl = int((before["ticker"] == "AAPL").sum())
    edited = _tail(before, "AAPL", 30)
    edited.iloc[5, edited.columns.get_loc("close")] += 1.0
    edited.iloc[9, edited.columns.get_loc("close")] *= 1.001
    path = tmp_path / "edited.csv"
    edited.to_csv(path, index=False)
    assert main(["ingest", str(path)]) == 2
    message = _error(capsys)
    assert "2 stored close(s) would be replaced by different values (AAPL 2;" in message
    assert f"first: AAPL {edited['date'].iloc[5]}" in message
    assert f"AAPL: 2 replaced, {n_aapl - 30:,} removed, 0 added" in message
    assert "--replace" in message
    pd.testing.assert_frame_equal(_stored(warehouse), before)


def test_replace_makes_the_file_the_history_and_says_so(warehouse, tmp_path, capsys):
    before = _stored(warehouse)
    n_aapl = int((before["ticker"] == "AAPL").sum())
    edited = _tail(before, "AAPL", 30)
    edited.iloc[5, edited.columns.get_loc("close")] += 1.0
    path = tmp_path / "edited.csv"
    edited.to_csv(path, index=False)
    assert main(["ingest", str(path), "--replace"]) == 0
    out = capsys.readouterr().out
    assert "replaced the stored history with 0 new rows; 29 already stored; 1 replaced; " in out
    assert f"{n_aapl - 30:,} removed for 1 ticker(s) (AAPL)" in out
    after = _stored(warehouse)
    aapl = after[after["ticker"] == "AAPL"]
    assert len(aapl) == 30
    assert aapl["close"].tolist() == pytest.approx(edited["close"].tolist())
    assert (after["ticker"] == "JPM").sum() == (before["ticker"] == "JPM").sum()  # untouched


def test_identical_reingest_and_a_hole_in_the_merged_series(warehouse, tmp_path):
    before = _stored(warehouse)
    with connect(warehouse) as con:
        changes = store_prices(con, load_skfolio_sp500(TICKERS), "skfolio again")
        assert {t: (c.added, c.changed, c.removed) for t, c in changes.items()} == {
            "AAPL": (0, 0, 0),
            "JPM": (0, 0, 0),
        }
        assert (
            changes["JPM"].unchanged == changes["JPM"].stored == (before["ticker"] == "JPM").sum()
        )
        far = pd.DataFrame(
            {
                "ticker": "JPM",
                "price_date": pd.bdate_range("2024-01-02", periods=3).date,
                "close": [1.0, 2.0, 3.0],
            }
        )
        with pytest.raises(PriceHistoryConflict, match="JPM: the file's dates are 370 days away"):
            store_prices(con, far, "far.csv")
    pd.testing.assert_frame_equal(_stored(warehouse), before)  # the source did not change
