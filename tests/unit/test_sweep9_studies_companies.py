"""Company metadata of a study (``tsrate.robustness.companies``) at the edges a mutation
sweep found untested.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_studies.json). What is pinned, each against values written out here
from the module's docstring: a ``--companies`` file's text is read verbatim (a ticker
``NA`` or an industry ``N/A`` stays text, an empty cell is no value); a ticker given two
different values of one column is refused in one line naming it and the column, while the
same value twice is fine; a file without the columns, of an unknown type or absent is
refused naming it; a price file without company columns gives None; stored rows read back
per ticker, newest non-empty value winning; later frames win in a merge unless their value
is empty; and the study's companies are the seed's under the stored ones, restricted to the
study's tickers whatever their case.
"""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.config import load_companies
from tsrate.robustness.companies import (
    COMPANY_COLUMNS,
    companies_in_price_file,
    merge_companies,
    read_companies_file,
    store_companies,
    store_file_companies,
    stored_companies,
    study_companies,
)


def _csv(tmp_path, text: str, name: str = "companies.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_companies_file_is_read_verbatim_one_row_per_ticker(tmp_path):
    path = _csv(
        tmp_path,
        " Ticker ,Company_Name,INDUSTRY,biased_offset\n"
        "na,NA Corp,N/A,\n"
        " zz ,,Energy, 3.5 \n"
        "ZZ,Zed,Energy,3.5\n",
    )
    got = read_companies_file(path)
    assert list(got.columns) == ["ticker", *COMPANY_COLUMNS]
    rows = got.to_dict("records")
    assert rows[0]["ticker"] == "NA" and rows[0]["company_name"] == "NA Corp"
    assert rows[0]["industry"] == "N/A" and pd.isna(rows[0]["biased_offset"])
    assert rows[1] == {"ticker": "ZZ", "company_name": "Zed", "industry": "Energy",
                       "biased_offset": 3.5}  # fmt: skip
    assert len(rows) == 2


def test_a_ticker_given_two_values_of_a_column_is_refused_naming_it(tmp_path):
    path = _csv(tmp_path, "ticker,industry\nAAA,Energy\nBBB,Banking\nAAA,Tech\n")
    with pytest.raises(TsrateError) as caught:
        read_companies_file(path)
    message = str(caught.value)
    assert "column industry gives ticker(s) ['AAA'] more than one value" in message
    assert "BBB" not in message and "\n" not in message


def test_a_non_numeric_offset_is_refused_naming_the_ticker(tmp_path):
    path = _csv(tmp_path, "ticker,biased_offset\nAAA,1\nBBB,lots\n")
    with pytest.raises(TsrateError, match=r"biased_offset of \['BBB'\] is not a number"):
        read_companies_file(path)


def test_files_that_cannot_be_companies_are_refused_naming_them(tmp_path):
    with pytest.raises(TsrateError, match="absent.csv: file does not exist"):
        read_companies_file(tmp_path / "absent.csv")
    with pytest.raises(TsrateError, match=r"unknown file type '\.xlsx'"):
        read_companies_file(_csv(tmp_path, "ticker,industry\n", "c.xlsx"))
    with pytest.raises(TsrateError, match=r"found \['ticker', 'sector'\]"):
        read_companies_file(_csv(tmp_path, "ticker,sector\nAAA,x\n"))
    with pytest.raises(TsrateError, match=r"found \['symbol', 'industry'\]"):
        read_companies_file(_csv(tmp_path, "symbol,industry\nAAA,x\n"))


def test_a_parquet_companies_file_reads_like_a_csv(tmp_path):
    path = tmp_path / "c.parquet"
    pd.DataFrame({"Ticker": ["aaa"], "industry": [" Energy "]}).to_parquet(path)
    got = read_companies_file(path).to_dict("records")
    assert got[0]["ticker"] == "AAA" and got[0]["industry"] == "Energy"
    assert got[0]["company_name"] is None


def test_a_price_file_gives_its_company_columns_or_none(tmp_path):
    plain = _csv(tmp_path, "ticker,date,close\nAAA,2023-01-02,1\n", "plain.csv")
    assert companies_in_price_file(plain) is None
    with_industry = _csv(
        tmp_path, "ticker,date,close,industry\nAAA,2023-01-02,1,Energy\n", "rich.csv"
    )
    assert companies_in_price_file(with_industry).to_dict("records") == [
        {"ticker": "AAA", "company_name": None, "industry": "Energy", "biased_offset": None}
    ]
    no_ticker = _csv(tmp_path, "symbol,date,close,industry\nAAA,2023-01-02,1,E\n", "n.csv")
    assert companies_in_price_file(no_ticker) is None


def test_stored_companies_read_back_the_newest_non_empty_value(tmp_path):
    con = duckdb.connect()
    assert list(stored_companies(con).columns) == ["ticker", *COMPANY_COLUMNS]
    assert stored_companies(con).empty
    first = pd.DataFrame({"ticker": ["AAA"], "company_name": ["A"], "industry": ["Tech"],
                          "biased_offset": [1.0]})  # fmt: skip
    second = pd.DataFrame({"ticker": ["AAA", "BBB"], "company_name": [None, "B"],
                           "industry": ["Energy", None], "biased_offset": [None, 2.0]})  # fmt: skip
    assert store_companies(con, first, "one") == 1
    assert store_companies(con, second, "two") == 2
    got = stored_companies(con).sort_values("ticker").to_dict("records")
    assert got[0] == {"ticker": "AAA", "company_name": "A", "industry": "Energy",
                      "biased_offset": 1.0}  # fmt: skip
    assert got[1]["ticker"] == "BBB" and got[1]["biased_offset"] == 2.0
    assert pd.isna(got[1]["industry"])
    con.close()


def test_later_frames_win_a_merge_unless_their_value_is_empty():
    early = pd.DataFrame({"ticker": ["aaa", "BBB"], "company_name": ["A", "B"],
                          "industry": ["Tech", "Bank"], "biased_offset": [1.0, 2.0]})  # fmt: skip
    late = pd.DataFrame({"ticker": ["AAA", "CCC"], "company_name": ["  ", "C"],
                         "industry": [None, "Oil"], "biased_offset": [float("nan"), 0.0]})  # fmt: skip
    got = merge_companies(early, None, late).to_dict("records")
    assert got == [
        {"ticker": "AAA", "company_name": "A", "industry": "Tech", "biased_offset": 1.0},
        {"ticker": "BBB", "company_name": "B", "industry": "Bank", "biased_offset": 2.0},
        {"ticker": "CCC", "company_name": "C", "industry": "Oil", "biased_offset": 0.0},
    ]
    overridden = merge_companies(early, late.assign(company_name=["Alpha", "C"]))
    assert overridden.loc[0, "company_name"] == "Alpha"


def test_the_studys_companies_are_the_seed_under_the_stored_rows(tmp_path):
    seed = load_companies()
    assert sorted(study_companies(None)["ticker"]) == sorted(seed["ticker"])
    con = duckdb.connect()
    store_companies(
        con,
        pd.DataFrame({"ticker": ["AAPL", "NEW"], "industry": ["Devices", "Other"]}),
        "mine",
    )
    selected = study_companies(con, ["aapl", "new", "jpm"])
    assert list(selected.columns) == ["ticker", *COMPANY_COLUMNS]
    assert list(selected.index) == [0, 1, 2]
    got = selected.set_index("ticker")
    assert sorted(got.index) == ["AAPL", "JPM", "NEW"]
    apple = seed.set_index("ticker").loc["AAPL"]
    assert got.loc["AAPL", "industry"] == "Devices"
    assert got.loc["AAPL", "company_name"] == apple["company_name"]
    assert got.loc["JPM", "industry"] == seed.set_index("ticker").loc["JPM", "industry"]
    assert pd.isna(got.loc["NEW", "company_name"])
    assert len(study_companies(con)) == len(seed) + 1  # every seed row kept without tickers
    con.close()


def test_storing_a_runs_files_says_how_many_tickers_each_gave(tmp_path):
    con = duckdb.connect()
    prices = _csv(
        tmp_path,
        "ticker,date,close,industry\nAAA,2023-01-02,1,E\nBBB,2023-01-02,1,F\n",
        "prices.csv",
    )
    plain = _csv(tmp_path, "ticker,date,close\nAAA,2023-01-02,1\n", "plain.csv")
    companies = _csv(tmp_path, "ticker,company_name\nCCC,C\n")
    assert store_file_companies(con) == []
    assert store_file_companies(con, plain) == []
    assert store_file_companies(con, prices, companies) == [
        f"stored company metadata of 2 ticker(s) from {prices}",
        f"stored company metadata of 1 ticker(s) from {companies}",
    ]
    assert store_file_companies(con, None, companies) == [
        f"stored company metadata of 1 ticker(s) from {companies}"
    ]
    con.close()
