"""``tsrate runs`` tells a run that stopped from one that runs.

A run killed while ``running``, ``building`` or ``publishing`` keeps that status in
``raw.runs`` until the next run or build reconciles it under the writer lock. The listing
writes nothing, but it reads ``raw.runs`` only while it holds the lock's shared side, when no
writer is alive: such a run is listed as stopped, with the status the reconciliation will give
it. Real DuckDB files, a real snapshot's ``published_runs``, the real lock; while a writer holds
it (this process, on its own descriptor: ``flock`` locks belong to an open file, so the
listing's descriptor conflicts with it as another process's would) nothing is called stopped.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import duckdb
import pytest

from tests.support.published_runs import published_runs_snapshot, warehouse_env
from tsrate import cli
from tsrate.platform.locking import writer_lock
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import (
    close_interrupted_runs,
    connect,
    mark_published_runs_succeeded,
)

STOPPED = "(stopped; the next run or build marks it interrupted)"
AFTER = "(stopped after its publication; the next run or build marks it succeeded)"


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    return warehouse_env(tmp_path / "tsrate.duckdb", monkeypatch)


def _runs(warehouse, rows):
    """raw.runs of a real warehouse with ``rows`` (run_id, status), started a minute apart
    in this order."""
    with connect(warehouse) as con:
        create_raw_tables(con)
        for minute, (run_id, status) in enumerate(rows):
            con.execute(
                "insert into raw.runs (run_id, started_at, status, study_hash, study, tickers, "
                "systems, perturbations, study_start, study_end, context_length, horizon, "
                "stride, perturbation_phase) values (?, ?, ?, 'h', '{}', ['AAPL'], ['naive'], "
                "['none'], date '2022-01-03', date '2022-06-30', 64, 5, 5, 0)",
                [run_id, dt.datetime(2026, 12, 5, 10, minute), status],
            )


def _snapshot(warehouse, run_ids):
    """A published snapshot beside ``warehouse`` recording the publication of ``run_ids``."""
    study = json.dumps({"tickers": ["AAPL"], "systems": ["naive"]})
    published_runs_snapshot(warehouse, [(run_id, None, study) for run_id in run_ids])


def _listed(out: str) -> dict[str, str]:
    """run_id -> its status cell, from the table ``tsrate runs`` prints (the cell between the
    run id and the first time stamp)."""
    cells = {}
    for line in out.splitlines()[1:]:
        found = re.match(r"\s*(\S+)\s+(.*?)\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}", line)
        assert found, line
        cells[found[1]] = found[2]
    return cells


def _stored(warehouse) -> dict[str, str]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return dict(con.execute("select run_id, status from raw.runs").fetchall())


ROWS = [
    ("done", "succeeded"),
    ("failed-build", "build_failed"),
    ("killed-forecasting", "running"),
    ("killed-building", "building"),
    ("killed-publishing", "publishing"),
    ("killed-after-swap", "publishing"),
]


def test_a_run_left_unfinished_with_no_writer_is_listed_stopped(warehouse, capsys):
    _runs(warehouse, ROWS)
    _snapshot(warehouse, ["done", "killed-after-swap"])
    before = _stored(warehouse)
    assert cli.main(["runs"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert _listed(out) == {
        "done": "succeeded",
        "failed-build": "build_failed",
        "killed-forecasting": f"running {STOPPED}",
        "killed-building": f"building {STOPPED}",
        "killed-publishing": f"publishing {STOPPED}",
        "killed-after-swap": f"publishing {AFTER}",
    }
    assert _stored(warehouse) == before  # a listing writes nothing


def test_the_listing_says_what_the_reconciliation_then_does(warehouse, capsys):
    _runs(warehouse, ROWS)
    _snapshot(warehouse, ["killed-after-swap"])
    cli.main(["runs"])
    promised = {
        run_id: status.split("marks it ")[1].rstrip(")") if "marks it" in status else status
        for run_id, status in _listed(capsys.readouterr().out).items()
    }
    with writer_lock(warehouse), connect(warehouse) as con:  # as the next run or build does
        mark_published_runs_succeeded(con, {"killed-after-swap"})
        close_interrupted_runs(con)
    assert _stored(warehouse) == promised
    cli.main(["runs"])
    assert STOPPED not in capsys.readouterr().out  # nothing left unfinished


def test_without_a_snapshot_every_unfinished_run_is_interrupted_next(warehouse, capsys):
    _runs(warehouse, [("killed-publishing", "publishing"), ("quote's-run", "building")])
    assert cli.main(["runs"]) == 0
    assert _listed(capsys.readouterr().out) == {
        "killed-publishing": f"publishing {STOPPED}",
        "quote's-run": f"building {STOPPED}",
    }


def test_while_a_writer_holds_the_lock_nothing_is_called_stopped(warehouse, capsys):
    _runs(warehouse, [("killed-publishing", "publishing"), ("writing", "publishing")])
    _snapshot(warehouse, ["killed-publishing"])
    with writer_lock(warehouse):
        assert cli.main(["runs"]) == 0
    out, err = capsys.readouterr()
    assert "a writer holds the warehouse" in err
    # the listing's words (not the lock holder's command line, which may name any file)
    assert "(stopped" not in out + err and "stopped" not in out
    assert _listed(out) == {"killed-publishing": "published"}


def test_a_published_run_id_with_a_quote_is_matched_as_it_is(warehouse, capsys):
    """The snapshot's run ids go into the listing's SQL as quoted literals."""
    _runs(warehouse, [("o'brien-run", "publishing"), ("o''brien-run", "publishing")])
    _snapshot(warehouse, ["o'brien-run"])
    assert cli.main(["runs"]) == 0
    assert _listed(capsys.readouterr().out) == {
        "o'brien-run": f"publishing {AFTER}",
        "o''brien-run": f"publishing {STOPPED}",
    }
