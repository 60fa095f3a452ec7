"""Strict validation end to end: every bad price file is one clear line from `tsrate ingest`
and leaves raw.prices exactly as it was; the product never writes outside the folder it was
given, even for a ticker stored before the rules existed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tsrate import TsrateError
from tsrate.cli import main
from tsrate.config import Study
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect, store_prices
from tsrate.robustness.blackbox.export import export_inputs, inside
from tsrate.robustness.sources import load_skfolio_sp500

GOOD_ROW = "AAPL,2022-12-29,130.0\n"
BAD_FILES = {
    "huge.csv": ("ticker,date,close\nAAPL,2022-12-29,1e12\n", "implausible close"),
    "tiny.csv": ("ticker,date,close\nAAPL,2022-12-29,1e-300\n", "implausible close"),
    "future.csv": ("ticker,date,close\nAAPL,9021-01-04,10\n", "9021-01-04"),
    "old.csv": ("ticker,date,close\nAAPL,1899-12-29,10\n", "outside 1900-01-01"),
    "nul.csv": ("ticker,date,close\nAA\x00PL,2022-12-29,10\n", "malformed ticker"),
    "evil.csv": ("ticker,date,close\n../../EVIL,2022-12-29,10\n", "malformed ticker"),
    "long.csv": (f"ticker,date,close\n{'X' * 5000},2022-12-29,10\n", "malformed ticker"),
    "twice.csv": ("ticker,date,close,close\nAAPL,2022-12-29,130,1\n", "duplicated column"),
    "zones.csv": (
        "ticker,date,close\nAAPL,2022-12-29T00:00:00+00:00,130\n"
        "AAPL,2022-12-30T00:00:00+09:00,131\n",
        "mix time zones",
    ),
}


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "tsrate.duckdb"
    with connect(path) as con:
        store_prices(con, load_skfolio_sp500(["AAPL"]), "skfolio")
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    return path


def _prices(path) -> pd.DataFrame:
    with connect(path, read_only=True) as con:
        return con.execute("select * from raw.prices order by all").df()


def test_every_bad_price_file_is_one_line_and_changes_nothing(warehouse, tmp_path, capsys):
    before = _prices(warehouse)
    for name, (text, expected) in BAD_FILES.items():
        path = tmp_path / name
        path.write_text(text)
        assert main(["ingest", str(path)]) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("tsrate: error: "), (name, err)
        assert expected in err[0] and name in err[0], (name, err[0])
        assert "\x00" not in err[0] and len(err[0]) < 1000, name
        pd.testing.assert_frame_equal(_prices(warehouse), before, obj=name)
    for name, frame, expected in (
        ("bool.parquet", {"close": [True]}, "column 'close' is boolean"),
        ("intdate.parquet", {"date": [20221229]}, "column 'date' holds int64"),
    ):
        path = tmp_path / name
        pd.DataFrame(
            {"ticker": ["AAPL"], "date": ["2022-12-29"], "close": [130.0], **frame}
        ).to_parquet(path)
        assert main(["ingest", str(path)]) == 2
        assert expected in capsys.readouterr().err
        pd.testing.assert_frame_equal(_prices(warehouse), before, obj=name)
    good = tmp_path / "good.csv"  # the same rules accept a sane file
    good.write_text("ticker,date,close\n" + GOOD_ROW)
    assert main(["ingest", str(good)]) == 0
    assert len(_prices(warehouse)) == len(before) + 1


def test_export_never_writes_outside_its_folder(tmp_path):
    """A hostile ticker stored by an older tsrate (before the ticker rules) cannot steer
    export-inputs --images out of the export folder."""
    warehouse = tmp_path / "wh" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    evil = "../../EVIL"
    with connect(warehouse) as con:
        create_raw_tables(con)  # the tables an older tsrate made
        prices = load_skfolio_sp500(["AAPL"])
        prices = prices[prices["price_date"] >= pd.Timestamp("2022-06-01").date()]
        con.register("p", prices.assign(ticker=evil))
        con.execute("insert into raw.prices select ticker, price_date, close, 'old', now() from p")
    study = Study.from_mapping(
        dict(
            study_tickers=[evil],
            study_start="2022-09-01",
            study_end="2022-12-28",
            context_length=30,
            horizon=5,
            perturbations=["P0"],
            systems=["naive"],
        )
    )
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    with connect(warehouse, read_only=True) as con:
        with pytest.raises(TsrateError, match="would leave the folder"):
            export_inputs(con, study, tmp_path / "out" / "export", image_windows=1)
    after = sorted(str(p) for p in tmp_path.rglob("*"))
    assert [p for p in after if p not in before] in ([], [str(tmp_path / "out")])
    assert not (tmp_path / "EVIL").exists() and not (tmp_path / "out" / "EVIL").exists()


def test_inside_refuses_every_escape(tmp_path):
    assert inside(tmp_path, Path("images", "AAPL", "P0")) == tmp_path / "images/AAPL/P0"
    for relative in ("../x", "images/../../x", "/etc/x", "images/A\x00B"):
        with pytest.raises(TsrateError, match="would leave the folder"):
            inside(tmp_path, Path(relative))
