"""`tsrate run`'s study warnings are lines of the run's log (stderr, time-stamped, level
WARNING), not stdout: a cron job's stdout holds the closing lines only. Checked up to the
writer lock (another writer holds it, so nothing runs)."""

from __future__ import annotations

import logging

from tests.support.locks import another_writer
from tsrate.cli import main

# the small study of tests/integration/test_small_study.py: 16 draws, some leave an arm empty
ARGS = ["--tickers", "KO,XOM", "--start", "2022-07-01", "--end", "2022-12-28",
        "--stride", "3", "--systems", "naive,random"]  # fmt: skip


def test_a_study_warning_goes_to_the_run_log(tmp_path, monkeypatch, capsys, caplog):
    warehouse = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    with caplog.at_level(logging.INFO, logger="tsrate.run"), another_writer(warehouse):
        assert main(["run", *ARGS]) == 2  # refused at the lock, after the study check
    out, err = capsys.readouterr()
    assert "n_draws_left_out" not in out and "warning" not in out
    assert "is being written by" in err
    warned = [r for r in caplog.records if "n_draws_left_out" in r.getMessage()]
    assert len(warned) == 1
    assert warned[0].name == "tsrate.run" and warned[0].levelno == logging.WARNING
    assert not warned[0].getMessage().startswith("warning:")  # the level says it once
