"""`tsrate runs` as a user runs it (its own process, the real exit status) while another
process writes the warehouse: with a published snapshot it lists the published runs and
succeeds; before any publication there is nothing it can list, so it fails as any reader
of a busy warehouse does (exit 2, one line naming the writer and when to rerun), rather
than exit 0 with nothing printed, which a script takes for "no runs". The writer is this
process holding the real lock (flock contends between processes)."""

from __future__ import annotations

import datetime as dt

import duckdb

from tests.integration.cli_child import run_tsrate
from tests.support.published_runs import published_runs_snapshot
from tsrate.platform.locking import writer_lock
from tsrate.platform.progress import phase


def test_runs_beside_a_writer_fails_before_a_publication_and_lists_the_published_after(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)  # the snapshot beside the warehouse
    warehouse = tmp_path / "live" / "tsrate.duckdb"
    warehouse.parent.mkdir()
    duckdb.connect(str(warehouse)).close()
    with writer_lock(warehouse), phase("forecast", lambda _: None):
        busy = run_tsrate("runs", warehouse=warehouse, cwd=tmp_path)
        published_runs_snapshot(warehouse, [("run-core", dt.datetime(2026, 12, 4, 9, 30), "{}")])
        listed = run_tsrate("runs", warehouse=warehouse, cwd=tmp_path)
    assert busy.returncode == 2, busy.stderr
    assert busy.stdout == ""
    line = busy.stderr.strip()
    assert "\n" not in line, busy.stderr  # one line
    assert line.startswith("tsrate: error: a writer holds the warehouse: "), line
    assert "now: forecast" in line and "no run is published yet" in line
    assert "rerun when it finishes" in line  # the hint
    assert listed.returncode == 0, listed.stderr
    assert "published runs" in listed.stderr
    assert listed.stdout.splitlines()[1].split()[:2] == ["run-core", "published"], listed.stdout
