"""`tsrate run --no-rate`: the nightly deployment's forecasts-only refresh from a command
line (cron without Prefect). It ingests and forecasts, leaves the run `forecasted`, and
builds, publishes and reports nothing; the next full run reuses its forecasts. One tiny
study: AAPL, naive, P0, forecast in this process (``--workers 1``)."""

from __future__ import annotations

import duckdb

from tsrate.cli import main
from tsrate.platform.publish import published_path

STUDY = ["--tickers", "AAPL", "--start", "2022-09-01", "--end", "2022-11-30",
         "--context-length", "30", "--horizon", "5", "--systems", "naive",
         "--perturbations", "P0", "--workers", "1"]  # fmt: skip


def _rows(warehouse, sql):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_no_rate_forecasts_and_leaves_the_run_forecasted(tmp_path, monkeypatch, capsys):
    warehouse = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    assert main(["run", *STUDY, "--no-rate"]) == 0
    out = capsys.readouterr().out
    (run_id, status), = _rows(warehouse, "select run_id, status from raw.runs")  # fmt: skip
    assert status == "forecasted"
    assert f"run {run_id} forecasted (--no-rate" in out and "succeeded" not in out
    stored = _rows(warehouse, f"select count(*) from raw.forecasts where run_id = '{run_id}'")
    assert stored[0][0] > 0
    assert not published_path(warehouse).exists()  # nothing published
    schemas = {r[0] for r in _rows(warehouse, "select schema_name from duckdb_schemas()")}
    assert "marts" not in schemas  # nothing built


def test_no_rate_is_off_by_default():
    from tsrate.cli import build_parser

    assert build_parser().parse_args(["run"]).no_rate is False
    assert build_parser().parse_args(["run", "--no-rate"]).no_rate is True
