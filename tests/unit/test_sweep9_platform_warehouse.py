"""Warehouse I/O (tsrate.platform.warehouse) on real temporary DuckDB files, at the edges the
older tests (real skfolio histories through the CLI) left free: the memory limit's default
against profiles.yml and its override, a warehouse in folders that do not exist yet, the
same-close tolerance at exactly 1e-12 relative (1.5e-12 is a change, 0.5e-12 is not), and the
counts, lines and messages people read after an ingest, with each hand-counted.

Written for the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep9_platform.json).
"""

from __future__ import annotations

import re

import duckdb
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.config import project_dir
from tsrate.platform.warehouse import (
    PriceHistoryConflict,
    buildable_run,
    connect,
    describe_price_changes,
    duckdb_settings,
    store_prices,
)


def prices(ticker: str, start: str, closes: list[float]) -> pd.DataFrame:
    dates = pd.bdate_range(start, periods=len(closes))
    return pd.DataFrame({"ticker": ticker, "price_date": dates.date, "close": closes})


def stored(con) -> list[tuple]:
    return con.execute(
        "select ticker, price_date::varchar, close from raw.prices order by ticker, price_date"
    ).fetchall()


def test_the_memory_limit_defaults_as_in_profiles_yml_and_follows_the_variable(monkeypatch):
    profile = (project_dir() / "profiles.yml").read_text()
    default = re.search(r"TSRATE_DUCKDB_MEMORY_LIMIT', '([^']+)'", profile).group(1)
    monkeypatch.delenv("TSRATE_DUCKDB_MEMORY_LIMIT", raising=False)
    assert duckdb_settings() == {"memory_limit": default}
    monkeypatch.setenv("TSRATE_DUCKDB_MEMORY_LIMIT", "1GB")
    assert duckdb_settings() == {"memory_limit": "1GB"}


def test_a_warehouse_in_folders_that_do_not_exist_yet(tmp_path):
    path = tmp_path / "data" / "2026" / "tsrate.duckdb"
    with connect(path) as con:
        con.execute("create table t as select 1 as x")
    with connect(path, read_only=True) as con:
        assert con.execute("select x from t").fetchall() == [(1,)]
    with pytest.raises(TsrateError, match="no warehouse at"):
        with connect(tmp_path / "elsewhere" / "tsrate.duckdb", read_only=True):
            pass
    assert not (tmp_path / "elsewhere").exists()


def test_a_close_is_the_same_within_1e_12_relative_only(tmp_path):
    """Stored 100.0; the file says 100 * (1 + 0.5e-12) (float noise: unchanged) on one day
    and 100 * (1 + 1.5e-12) (a change) on another."""
    with connect(tmp_path / "w.duckdb") as con:
        store_prices(con, prices("AAPL", "2022-01-03", [100.0, 100.0]), "first.csv")
        noise = prices("AAPL", "2022-01-03", [100.0 * (1 + 0.5e-12)])
        changes = store_prices(con, noise, "noise.csv")
        assert (changes["AAPL"].unchanged, changes["AAPL"].changed) == (1, 0)
        edited = prices("AAPL", "2022-01-04", [100.0 * (1 + 1.5e-12)])
        with pytest.raises(PriceHistoryConflict, match="1 stored close"):
            store_prices(con, edited, "edited.csv")
        assert [row[2] for row in stored(con)] == [100.0, 100.0]


def test_the_ingest_line_lists_the_totals_and_the_tickers():
    from tsrate.platform.warehouse import PriceChanges

    changes = {
        "JPM": PriceChanges("JPM", 2, 1000, 1, 3, 1002),
        "AAPL": PriceChanges("AAPL", 1, 30, 0, 0, 31),
    }
    assert describe_price_changes(changes) == (
        "3 new rows; 1,030 already stored for 2 ticker(s) (AAPL, JPM)"
    )
    assert describe_price_changes(changes, replace=True) == (
        "3 new rows; 1,030 already stored; 1 replaced; 3 removed for 2 ticker(s) (AAPL, JPM)"
    )


def test_the_counts_of_a_merge_and_of_a_replace(tmp_path):
    """Stored: AAPL on 3-7 Jan 2022 (5 business days), JPM on 3-4 Jan. Merge a file with AAPL
    6-7 Jan (same closes) and 10-12 Jan (new): 3 added, 2 unchanged, 0 changed, 0 removed
    (a merge removes nothing), 5 + 3 = 8 stored; JPM untouched. Then replace AAPL with 4-5
    Jan, 5 Jan changed: 0 added, 1 unchanged, 1 changed, 6 removed, 2 stored."""
    with connect(tmp_path / "w.duckdb") as con:
        store_prices(con, prices("AAPL", "2022-01-03", [1.0, 2.0, 3.0, 4.0, 5.0]), "a.csv")
        store_prices(con, prices("JPM", "2022-01-03", [7.0, 8.0]), "j.csv")
        merged = prices("AAPL", "2022-01-06", [4.0, 5.0, 6.0, 7.0, 8.0])
        got = store_prices(con, merged, "more.csv")["AAPL"]
        assert (got.added, got.unchanged, got.changed, got.removed, got.stored) == (3, 2, 0, 0, 8)
        assert con.execute("select count(*) from raw.prices where ticker = 'AAPL'").fetchone() == (
            8,
        )
        replaced = prices("AAPL", "2022-01-04", [2.0, 3.5])
        got = store_prices(con, replaced, "fix.csv", replace=True)["AAPL"]
        assert (got.added, got.unchanged, got.changed, got.removed, got.stored) == (0, 1, 1, 6, 2)
        assert stored(con) == [
            ("AAPL", "2022-01-04", 2.0),
            ("AAPL", "2022-01-05", 3.5),
            ("JPM", "2022-01-03", 7.0),
            ("JPM", "2022-01-04", 8.0),
        ]


def test_a_conflict_names_only_the_tickers_a_replace_would_change(tmp_path):
    """AAPL's file repeats its 5 stored days with 5 Jan changed; JPM's repeats its 2 days
    unchanged: only AAPL is listed (1 replaced, 0 removed, 0 added); nothing is stored."""
    with connect(tmp_path / "w.duckdb") as con:
        store_prices(con, prices("AAPL", "2022-01-03", [1.0, 2.0, 3.0, 4.0, 5.0]), "a.csv")
        store_prices(con, prices("JPM", "2022-01-03", [7.0, 8.0]), "j.csv")
        before = stored(con)
        file = pd.concat(
            [
                prices("AAPL", "2022-01-03", [1.0, 2.0, 3.5, 4.0, 5.0]),
                prices("JPM", "2022-01-03", [7.0, 8.0]),
            ]
        )
        with pytest.raises(PriceHistoryConflict) as error:
            store_prices(con, file, "edited.csv")
        assert str(error.value) == (
            "edited.csv: would change stored price history, nothing was stored: 1 stored "
            "close(s) would be replaced by different values (AAPL 1; first: AAPL 2022-01-05 "
            "stored 3.0, file 3.5). To make the file the whole stored history of its "
            "tickers, ingest again with --replace (AAPL: 1 replaced, 0 removed, 0 added)"
        )
        assert stored(con) == before


def test_a_conflict_lists_every_ticker_a_replace_would_change_and_only_those(tmp_path):
    """Stored: AAPL 3-7 Jan, JPM, MSFT and XOM 3-4 Jan. The file: AAPL with 5 Jan changed,
    JPM's 3 Jan only (a replace would remove 4 Jan), MSFT three days from 1 Mar (56 days after
    its last stored day, 4 Jan: a hole; a replace would remove both stored days), XOM as
    stored (listed nowhere)."""
    with connect(tmp_path / "w.duckdb") as con:
        store_prices(con, prices("AAPL", "2022-01-03", [1.0, 2.0, 3.0, 4.0, 5.0]), "a.csv")
        for ticker, closes in (("JPM", [7.0, 8.0]), ("MSFT", [10.0, 11.0]), ("XOM", [20.0, 21.0])):
            store_prices(con, prices(ticker, "2022-01-03", closes), f"{ticker}.csv")
        before = stored(con)
        file = pd.concat(
            [
                prices("AAPL", "2022-01-03", [1.0, 2.0, 3.5, 4.0, 5.0]),
                prices("JPM", "2022-01-03", [7.0]),
                prices("MSFT", "2022-03-01", [12.0, 13.0, 14.0]),
                prices("XOM", "2022-01-03", [20.0, 21.0]),
            ]
        )
        with pytest.raises(PriceHistoryConflict) as error:
            store_prices(con, file, "edited.csv")
        message = str(error.value)
        assert "MSFT: the file's dates are 56 days away from the stored history" in message
        assert message.endswith(
            "ingest again with --replace (AAPL: 1 replaced, 0 removed, 0 added; "
            "JPM: 0 replaced, 1 removed, 0 added; MSFT: 0 replaced, 2 removed, 3 added)"
        )
        assert stored(con) == before


def runs_table(con, rows: list[tuple[str, str, str, str | None]]) -> None:
    con.execute(
        "create schema if not exists raw; create table raw.runs (run_id varchar, "
        "started_at timestamp, finished_at timestamp, status varchar, message varchar)"
    )
    for run_id, started, status, message in rows:
        con.execute(
            "insert into raw.runs values (?, ?, null, ?, ?)", [run_id, started, status, message]
        )


def test_a_note_shows_the_first_line_of_the_message_cut_at_300_characters():
    """A traceback's first line of 400 characters shows its first 300; a run without a
    message says so."""
    con = duckdb.connect()
    try:
        first = "".join(chr(ord("a") + i % 26) for i in range(400))
        runs_table(
            con,
            [
                ("good", "2026-01-01", "succeeded", None),
                ("quiet", "2026-01-02", "failed", "  "),
                ("loud", "2026-01-03", "build_failed", f"{first}\nsecond line"),
            ],
        )
        run_id, notes = buildable_run(con)
    finally:
        con.close()
    assert run_id == "good"
    assert notes == [f"run loud is build_failed: {first[:300]}", "run quiet is failed: no message"]
    assert len(notes[0]) == len("run loud is build_failed: ") + 300


def test_no_run_at_all_is_named():
    con = duckdb.connect()
    try:
        runs_table(con, [])
        with pytest.raises(TsrateError, match="no run in raw.runs yet"):
            buildable_run(con)
    finally:
        con.close()
