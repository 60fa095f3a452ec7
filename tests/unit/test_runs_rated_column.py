"""``tsrate runs`` lists each run's own systems, and in column ``rated`` what its
publication rates where that differs (``published_runs.systems_rated``: an earlier import of
the study the marts still rate, a withdrawn system they leave out), from the newest
publication of the run; empty for a run published as it is, one not published, or a snapshot
published before systems_rated. Both listings: ``raw.runs`` with no writer, the snapshot's
publications while a writer holds the lock. Real DuckDB files, a snapshot's published_runs
with publish's columns, the real lock. A real import and publication:
tests/integration/test_published_rated_withdrawn.py."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pytest

from tests.support.published_runs import listed_rows, published_runs_snapshot, warehouse_env
from tsrate import cli
from tsrate.platform.locking import writer_lock
from tsrate.platform.raw_schema import create_raw_tables
from tsrate.platform.warehouse import connect

#: run -> its own systems (raw.runs.systems), started a minute apart in this order
OWN = {
    "imported": ["ext", "naive"],
    "plain": ["seasonal_naive", "naive"],
    "as-is": ["naive"],
    "withdrew": ["ext", "naive"],
    "o'quote": ["naive"],
    "unpublished": ["naive"],
}
#: run -> systems_rated of its publications, oldest first
PUBLISHED = {
    "plain": [["naive", "seasonal_naive"], ["ext", "naive", "seasonal_naive"]],
    "as-is": [["ext", "naive"], ["naive"]],  # rated more once, then as it is (newest wins)
    "withdrew": [["naive"]],
    "o'quote": [["ext", "naive"]],
}
#: run -> the rated cell: what differs from its own systems, newest publication
RATED_LIVE = {
    "imported": "",
    "plain": '["ext", "naive", "seasonal_naive"]',
    "as-is": "",
    "withdrew": '["naive"]',
    "o'quote": '["ext", "naive"]',
    "unpublished": "",
}


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    warehouse = warehouse_env(tmp_path / "tsrate.duckdb", monkeypatch)
    with connect(warehouse) as con:
        create_raw_tables(con)
        for minute, (run_id, systems) in enumerate(OWN.items()):
            con.execute(
                "insert into raw.runs (run_id, started_at, status, study_hash, study, tickers, "
                "systems, perturbations, study_start, study_end, context_length, horizon, "
                "stride, perturbation_phase) values (?, ?, 'succeeded', 'h', '{}', ['AAPL'], "
                "?, ['none'], date '2022-01-03', date '2022-06-30', 64, 5, 5, 0)",
                [run_id, dt.datetime(2026, 12, 5, 10, minute), systems],
            )
    return warehouse


def _publish(warehouse, with_rated: bool = True):
    """The snapshot's published_runs: each of :data:`PUBLISHED`'s publications an hour
    apart, with publish's columns (or, ``with_rated`` False, those of a snapshot published
    before systems and systems_rated)."""
    rows = []
    hour = 0
    for run_id, publications in PUBLISHED.items():
        for rated in publications:
            hour += 1
            rows.append((run_id, dt.datetime(2026, 12, 6, hour), rated))
    study = json.dumps({"tickers": ["AAPL"], "systems": ["naive"]})
    snapshot = published_runs_snapshot(warehouse, [(r, at, study) for r, at, _ in rows])
    if with_rated:
        with duckdb.connect(str(snapshot)) as con:
            con.execute("alter table published_runs add column systems varchar[]")
            con.execute("alter table published_runs add column systems_rated varchar[]")
            for run_id, at, rated in rows:
                con.execute(
                    "update published_runs set systems = ?, systems_rated = ? "
                    "where run_id = ? and published_at = ?",
                    [OWN[run_id], rated, run_id, at],
                )


def _cells(out: str) -> dict[str, dict[str, str]]:
    """run_id -> column -> cell of a listing with one row per run."""
    return {row["run_id"]: row for row in listed_rows(out)}


def test_the_live_listing_shows_what_each_publication_rates_where_it_differs(warehouse, capsys):
    _publish(warehouse)
    assert cli.main(["runs"]) == 0
    table = _cells(capsys.readouterr().out)
    assert {run: row["rated"] for run, row in table.items()} == RATED_LIVE
    assert table["plain"]["systems"] == '["seasonal_naive", "naive"]'  # its own, as before


def test_while_a_writer_holds_the_lock_the_publications_show_it_too(warehouse, capsys):
    _publish(warehouse)
    with writer_lock(warehouse):
        assert cli.main(["runs"]) == 0
    out, err = capsys.readouterr()
    assert "a writer holds the warehouse" in err
    rated = {}
    for row in listed_rows(out):  # one row per publication, newest first
        rated.setdefault(row["run_id"], []).append(row["rated"])
    assert rated == {
        "plain": ["ext,naive,seasonal_naive", ""],
        "as-is": ["", "ext,naive"],
        "withdrew": ["naive"],
        "o'quote": ["ext,naive"],
    }


def test_a_snapshot_published_before_systems_rated_leaves_the_column_empty(warehouse, capsys):
    _publish(warehouse, with_rated=False)
    assert cli.main(["runs"]) == 0
    table = _cells(capsys.readouterr().out)
    assert set(table) == set(OWN) and {row["rated"] for row in table.values()} == {""}
    with writer_lock(warehouse):
        assert cli.main(["runs"]) == 0
    table = listed_rows(capsys.readouterr().out)
    assert {row["run_id"] for row in table} == set(PUBLISHED)
    assert {row["rated"] for row in table} == {""}
