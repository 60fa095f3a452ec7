"""The writing commands (``tsrate.commands.pipeline``: ``ingest``, ``import --no-build``,
``export-inputs``, ``show-input``) at the edges a mutation sweep found untested, run through
``tsrate.cli.main`` in this process (no dbt build, no process: forecasts of one partition are
computed in this process).

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_studies.json). What is pinned: ``ingest --source yahoo`` refusing in one
line unless ticker, start and end are all given (checked before any download), and plain
``ingest`` reading the bundled sample; the company columns of an ingested price file and of
``--companies`` stored, one line each, and nothing stored from a file without them;
``import --no-build`` forecasting the study's own systems beside the imported one unless
``--no-baselines``, exiting 0; ``export-inputs`` exporting the study its flags describe (any
one flag), the newest run's study without flags, the study ``--study`` names, and refusing
``--study`` with flags; ``show-input`` naming its PNG after the window when no ``--output``
is given; and ``export-inputs``, ``show-input`` and what a finished run skipped reading the
warehouse while another reader holds it open (they only read). The commands that end in a
build are tests/integration/test_sweep9_studies_pipeline.py's.
"""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest

from tests.support.import_study import METADATA
from tsrate.cli import main
from tsrate.config import Study, load_companies
from tsrate.platform.warehouse import connect, duckdb_settings, store_prices
from tsrate.robustness.sources import load_skfolio_sp500

SMALL = dict(study_tickers="AAPL", study_start="2022-10-03", study_end="2022-12-28",
             context_length=20, horizon=5, systems="naive", perturbations="P0")  # fmt: skip


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "wh" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    return path


def _error(capsys) -> str:
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    return err[0]


# --- ingest ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [
        ["--tickers", "AAPL"],
        ["--tickers", "AAPL", "--start", "2022-01-03"],
        ["--tickers", "AAPL", "--end", "2022-02-01"],
        ["--start", "2022-01-03", "--end", "2022-02-01"],
        ["--end", "2022-02-01"],
    ],
)
def test_yahoo_needs_tickers_start_and_end_before_any_download(warehouse, capsys, flags):
    assert main(["ingest", "--source", "yahoo", *flags]) == 2
    assert _error(capsys) == "tsrate: error: --source yahoo needs --tickers, --start and --end"
    assert not warehouse.exists()


def test_ingest_without_a_file_reads_the_bundled_sample(warehouse, capsys):
    assert main(["ingest", "--tickers", "aapl,jpm"]) == 0
    out = capsys.readouterr().out
    assert "from skfolio in" in out
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        tickers = con.execute("select distinct ticker from raw.prices order by 1").fetchall()
    finally:
        con.close()
    assert tickers == [("AAPL",), ("JPM",)]


def _price_file(path, companies: bool) -> None:
    days = pd.bdate_range("2022-01-03", periods=3).strftime("%Y-%m-%d")
    frame = pd.DataFrame({"ticker": ["ZZA"] * 3 + ["ZZB"] * 3, "date": list(days) * 2,
                          "close": [10.0, 11.0, 12.0, 20.0, 21.0, 22.0]})  # fmt: skip
    if companies:
        frame["industry"] = ["Energy"] * 3 + ["Banking"] * 3
    frame.to_csv(path, index=False)


def _stored_metadata(warehouse) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(
            "select ticker, company_name, industry, source from raw.company_metadata order by 1"
        ).fetchall()
    finally:
        con.close()


def test_an_ingested_files_company_columns_are_stored(warehouse, tmp_path, capsys):
    prices = tmp_path / "prices.csv"
    _price_file(prices, companies=True)
    assert main(["ingest", str(prices)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"stored company metadata of 2 ticker(s) from {prices}"
    assert _stored_metadata(warehouse) == [
        ("ZZA", None, "Energy", str(prices)),
        ("ZZB", None, "Banking", str(prices)),
    ]


def test_a_companies_file_is_stored_with_a_plain_price_file(warehouse, tmp_path, capsys):
    prices, companies = tmp_path / "prices.csv", tmp_path / "companies.csv"
    _price_file(prices, companies=False)
    companies.write_text("ticker,company_name\nZZA,Zed A\n")
    assert main(["ingest", str(prices)]) == 0
    assert "company metadata" not in capsys.readouterr().out
    assert main(["ingest", str(prices), "--companies", str(companies)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"stored company metadata of 1 ticker(s) from {companies}"
    assert _stored_metadata(warehouse) == [("ZZA", "Zed A", None, str(companies))]


# --- import -----------------------------------------------------------------------------------

IMPORT_FLAGS = ["--tickers", "AAPL", "--start", "2022-09-01", "--end", "2022-12-28",
                "--context-length", "30", "--horizon", "5", "--systems", "naive",
                "--perturbations", "P0"]  # fmt: skip


@pytest.mark.parametrize("baselines", [True, False])
def test_an_import_without_a_build_forecasts_the_baselines_unless_told_not_to(
    warehouse, tmp_path, capsys, baselines
):
    from tests.support.import_study import STUDY, prediction_grid
    from tsrate.robustness.forecast.plan import load_series

    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["AAPL", "JPM"]), "skfolio")
        grid = prediction_grid(load_series(con, STUDY))
    path = tmp_path / "external.csv"
    # one ticker, one perturbation, one baseline: one partition, forecast in this process
    grid[(grid["perturbation_id"] == "P0") & (grid["ticker"] == "AAPL")].to_csv(path, index=False)
    metadata = tmp_path / "external.yaml"
    metadata.write_text(METADATA)
    flags = [] if baselines else ["--no-baselines"]
    argv = ["import", str(path), "--system", "external", *IMPORT_FLAGS, "--no-build"]
    assert main([*argv, "--metadata", str(metadata), *flags]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("the marts are stale until you run: tsrate build --study ")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        systems = con.execute("select systems from raw.runs").fetchone()[0]
    finally:
        con.close()
    assert systems == (["naive", "external"] if baselines else ["external"])


# --- export-inputs ----------------------------------------------------------------------------


@pytest.fixture
def with_a_run(warehouse):
    """Prices of AAPL and JPM and one finished (tiny, real) naive run over JPM."""
    from tsrate.robustness.forecast.execute import finish_run, run_forecasts

    study = Study.from_mapping({**SMALL, "study_tickers": "JPM"})
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["AAPL", "JPM"]), "skfolio")
        run_id = run_forecasts(con, study, load_companies(), workers=1).run_id
        finish_run(con, run_id, "forecasted")
        name = con.execute("select study_name from raw.studies").fetchone()[0]
    return name


def _manifest(folder) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def test_export_inputs_follows_any_one_study_flag_else_the_newest_runs_study(
    with_a_run, warehouse, tmp_path, capsys
):
    flagged = tmp_path / "flagged"
    flags = ["--tickers", "AAPL", "--start", "2022-10-03", "--end", "2022-12-28",
             "--context-length", "20", "--horizon", "5", "--perturbations", "P0"]  # fmt: skip
    assert main(["export-inputs", str(flagged), *flags]) == 0
    out = capsys.readouterr().out
    assert "exporting the study of" not in out
    assert list(_manifest(flagged)["tickers"]) == ["AAPL"]
    assert _manifest(flagged)["study_id"] is None  # flags: no stored study named
    con = duckdb.connect(str(warehouse), read_only=True)
    try:  # the id `tsrate studies` shows, not the hash of the study's JSON
        study_id = con.execute(
            "select study_id from raw.studies where study_name = ?", [with_a_run]
        ).fetchone()[0]
        run_study = con.execute("select study_id from raw.runs").fetchone()[0]
    finally:
        con.close()
    assert study_id == run_study

    newest = tmp_path / "newest"
    reader = duckdb.connect(str(warehouse), read_only=True, config=duckdb_settings())
    try:  # the export only reads: another reader may hold the warehouse
        assert main(["export-inputs", str(newest)]) == 0
    finally:
        reader.close()
    assert capsys.readouterr().out.startswith(
        f"exporting the study of the newest run (id {study_id})\n"
    )
    assert list(_manifest(newest)["tickers"]) == ["JPM"]
    assert _manifest(newest)["study_id"] == study_id != _manifest(newest)["study_hash"]

    named = tmp_path / "named"
    assert main(["export-inputs", str(named), "--study", with_a_run]) == 0
    assert capsys.readouterr().out.startswith(
        f"exporting the study of --study {with_a_run} (id {study_id})\n"
    )
    assert list(_manifest(named)["tickers"]) == ["JPM"]
    assert _manifest(named)["study_id"] == study_id

    assert (
        main(["export-inputs", str(tmp_path / "x"), "--study", with_a_run, "--horizon", "5"]) == 2
    )
    assert _error(capsys) == (
        "tsrate: error: --study names a stored study: give it or the study flags, not both"
    )


# --- after a run ------------------------------------------------------------------------------


def test_what_a_run_skipped_is_read_while_another_reader_holds_the_warehouse(
    with_a_run, warehouse, capsys
):
    from tsrate.commands.pipeline import _print_run_problems

    con = duckdb.connect(str(warehouse))
    run_id = con.execute("select run_id from raw.runs").fetchone()[0]
    con.execute(
        "insert into raw.run_skipped_systems (run_id, system_id, reason, recorded_at) "
        "values (?, 'chronos', 'no weights here', now()::timestamp)",
        [run_id],
    )
    con.close()
    reader = duckdb.connect(str(warehouse), read_only=True, config=duckdb_settings())
    try:
        _print_run_problems(run_id)
    finally:
        reader.close()
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("warning: ") and "chronos" in out[0] and "no weights here" in out[0]
    assert out[-1] == "details: staging.stg_run_skipped_systems, marts.forecast_failures_summary"


# --- show-input ---------------------------------------------------------------------------------


def test_show_input_reads_only_and_names_its_png_after_the_window(
    warehouse, tmp_path, monkeypatch, capsys
):
    with connect(warehouse) as con:
        store_prices(con, load_skfolio_sp500(["MRK"]), "skfolio")
    monkeypatch.chdir(tmp_path)
    flags = ["--tickers", "MRK", "--start", "2021-12-29", "--end", "2022-12-28"]
    argv = ["show-input", "--system", "vit_num_spec_covid", "--ticker", "mrk"]
    argv += ["--date", "2022-06-01", "--perturbation", "P0", *flags]
    reader = duckdb.connect(str(warehouse), read_only=True, config=duckdb_settings())
    try:
        assert main(argv) == 0
    finally:
        reader.close()
    png = tmp_path / "vit_num_spec_covid-MRK-2022-06-01-P0.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.startswith(f"wrote {png.name} (")
