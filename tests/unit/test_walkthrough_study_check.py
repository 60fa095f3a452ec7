"""`tsrate run --file MISSING.csv` reports the missing file once (the study check listed it
twice: the company-metadata read's "[Errno 2] No such file or directory" and the price
check's "file does not exist")."""

from __future__ import annotations

from tsrate import cli


def test_a_missing_price_file_is_one_problem(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "tsrate.duckdb"))
    missing = tmp_path / "prices.csv"
    assert cli.main(["run", "--file", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "nothing was run" in err
    about_the_file = [line for line in err.splitlines() if line.startswith("  - --file")]
    assert about_the_file == [f"  - --file {missing}: file does not exist"]
    assert "Errno" not in err


def test_a_price_file_with_company_columns_still_gives_its_companies(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(tmp_path / "tsrate.duckdb"))
    prices = tmp_path / "prices.csv"
    prices.write_text("ticker,date,close,company_name,industry\nZZZZ,2022-01-03,10,Zed,Tools\n")
    assert cli.main(["run", "--file", str(prices), "--tickers", "ZZZZ"]) == 2
    err = capsys.readouterr().err
    assert "has no row in seeds/companies.csv" not in err  # its industry came from the file
    assert "trading days" in err  # one day of prices is too short a series
