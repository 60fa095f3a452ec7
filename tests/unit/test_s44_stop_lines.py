"""The stop line (Ctrl-C, SIGTERM) says what the stop left where the command knows better
than the generic "nothing half-written is kept ... the next run marks an unfinished run
interrupted": a stopped `tsrate report` wrote nothing and touched no run. (A stopped
import's line: tests/integration/test_s44_import_interrupted.py; the generic line:
tests/unit/test_sweep9_cli.py.)"""

from __future__ import annotations

import signal

from tsrate import cli
from tsrate.robustness.report import render


def test_a_report_stopped_while_writing_says_nothing_was_written(tmp_path, capsys, monkeypatch):
    snapshot = tmp_path / "tsrate.duckdb"
    snapshot.touch()  # never opened: the stop comes first
    output = tmp_path / "out.html"

    def stopped(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202 - write_report's arguments
        signal.raise_signal(signal.SIGINT)  # a real Ctrl-C: Python's default handler

    monkeypatch.setattr(render, "write_report", stopped)
    status = cli.main(["report", "--snapshot", str(snapshot), "--output", str(output)])
    assert status == 128 + signal.SIGINT
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"tsrate: stopped by SIGINT; no report was written: {output} and its charts folder "
        "are as they were (the warehouse is only read)"
    ]
