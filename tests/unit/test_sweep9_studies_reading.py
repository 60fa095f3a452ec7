"""The reading commands (``tsrate.commands.reading``: ``systems``, ``studies``, ``runs``,
``query``, ``export --format fev``, ``serve --dry-run``) at the edges a mutation sweep found
untested, run through ``tsrate.cli.main`` in this process.

Written for round 9 of the mutation sweep (tests/planted/mutate.py; survivors in
tests/planted/sweep9_studies.json). What is pinned: each command's exit status 0; the
systems table aligned on its longest id (measured here from the printed lines); the imported
systems listed from a warehouse that another reader holds open read-only (the command only
reads); the studies listing with and without a warehouse; the prompt of a language-model
system, and a one-line refusal naming an unknown or non-language system; runs read from the
live warehouse; and the query's timeout (0: no limit) and its row-limit note, on stderr
for csv and json only (a small timeout stopping a slow query is tests/unit/test_query.py's);
``export --format fev`` writing a summary of a (hand-made) snapshot's task errors; and
``serve --dry-run --nightly-rating`` showing the nightly deployment rating.
"""

from __future__ import annotations

import json

import duckdb
import pytest

from tests.support.locks import another_writer
from tests.support.old_runs import STUDY_WITH_IMPORT, warehouse_with_an_import
from tests.support.warehouses import OLD_RUNS_DDL
from tsrate.cli import main
from tsrate.config import Study
from tsrate.platform.warehouse import duckdb_settings

STUDY = STUDY_WITH_IMPORT


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    path = tmp_path / "wh" / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(path))
    return path


def _with_an_import(path) -> str:
    return warehouse_with_an_import(path, STUDY)


def test_the_systems_table_is_aligned_on_its_longest_id(warehouse, capsys):
    assert main(["systems"]) == 0
    printed = capsys.readouterr().out.splitlines()
    lines = [line for line in printed if not line.startswith(" ")]  # not a long reason's rest
    ids = [line.split()[0] for line in lines]
    width = max(len(i) for i in ids)
    assert width > min(len(i) for i in ids)
    for line in lines:
        assert line[width : width + 2] == "  ", line
        assert line[width + 2 :].startswith(("available  ", "unavailable")), line
    assert not any("imported systems" in line for line in printed)  # no warehouse: none


def test_imported_systems_are_listed_while_another_reader_holds_the_warehouse(warehouse, capsys):
    study_id = _with_an_import(warehouse)
    reader = duckdb.connect(str(warehouse), read_only=True, config=duckdb_settings())
    try:
        assert main(["systems"]) == 0
    finally:
        reader.close()
    out = capsys.readouterr().out.splitlines()
    at = out.index("imported systems (rated in their study's marts once built):")
    assert out[at + 1].startswith(f"  ext  imported from ext.csv (sha256 {'ab' * 6})")
    assert f"({study_id})" in out[at + 1]


def test_the_studies_listing_with_and_without_a_warehouse(warehouse, capsys):
    assert main(["studies"]) == 0
    assert capsys.readouterr().out == (
        f"no study yet: no warehouse at {warehouse}; `tsrate run` defines one\n"
    )
    study_id = _with_an_import(warehouse)
    assert main(["studies"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[0].startswith(f"study-{study_id[:8]}  {study_id}  1 run, ")
    assert out[1].startswith("  2 tickers")


def test_the_studies_listing_reads_beside_a_reader_and_is_refused_by_a_writer(warehouse, capsys):
    """`tsrate studies` took the writer lock for a listing: refused beside a `--live` query,
    shown by `tsrate status` as the writer, in a nightly job's way. It reads under the
    lock's shared side now, and writes only where an earlier release's runs lack a study."""
    from tsrate.platform.locking import lock_path, writer_status
    from tsrate.platform.query import live_reader

    study_id = _with_an_import(warehouse)
    before = warehouse.read_bytes()
    with live_reader(warehouse):  # a --live query in progress
        assert main(["studies"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[0].startswith(f"study-{study_id[:8]}  {study_id}  1 run, ")
    assert out[1].startswith("  2 tickers")
    assert warehouse.read_bytes() == before  # nothing written
    assert writer_status(warehouse) is None and lock_path(warehouse).read_text() == ""

    with another_writer(warehouse):
        assert main(["studies"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tsrate: error: the live warehouse {warehouse} is being written by")
    assert "Rerun it when the writer finishes" in err and len(err.splitlines()) == 1


def test_the_studies_listing_gives_an_earlier_releases_runs_their_study(warehouse, capsys):
    warehouse.parent.mkdir(parents=True)
    con = duckdb.connect(str(warehouse))
    con.execute(OLD_RUNS_DDL)  # no raw.studies, no raw.runs.study_id
    con.execute(
        "insert into raw.runs values ('r1', '2026-01-01', '2026-01-01', 'succeeded', ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, 'old')",
        [STUDY.study_hash, STUDY.to_json(), list(STUDY.tickers), list(STUDY.systems),
         list(STUDY.perturbations), STUDY.start, STUDY.end, STUDY.context_length,
         STUDY.horizon, STUDY.stride, STUDY.perturbation_phase],
    )  # fmt: skip
    con.close()
    assert main(["studies"]) == 0
    line, window, _ = capsys.readouterr().out.splitlines()
    assert "1 run, last" in line and window.startswith("  2 tickers")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("select count(*) from raw.runs where study_id is null").fetchone() == (
            0,
        )
        assert con.execute("select study_id from raw.runs").fetchone()[0] == line.split()[1]
    finally:
        con.close()


def test_the_prompt_of_a_language_model_and_refusals_naming_the_system(warehouse, capsys):
    assert main(["systems", "--show-prompt", "gemini_numeric"]) == 0
    out = capsys.readouterr().out
    context, horizon = Study.from_vars().context_length, Study.from_vars().horizon
    assert out.startswith(f"# gemini_numeric: prompt for a sample window of {context} values\n")
    assert f"Here are {context} consecutive daily closing prices" in out
    assert f"Forecast the next {horizon} daily closing prices" in out
    assert main(["systems", "--show-prompt", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tsrate: error: unknown system 'nope' (hint: `tsrate systems` lists")
    assert main(["systems", "--show-prompt", "naive"]) == 2
    assert capsys.readouterr().err.startswith(
        "tsrate: error: system 'naive' is not a language model: it has no prompt (hint: "
    )


def test_runs_are_read_from_the_live_warehouse(warehouse, capsys):
    _with_an_import(warehouse)
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert "r1" in out and "succeeded" in out


def test_the_query_timeout_zero_means_no_limit(warehouse, capsys):
    _with_an_import(warehouse)
    assert main(["query", "select 41 + 1 as x", "--live", "--timeout", "0"]) == 0
    assert "42" in capsys.readouterr().out
    assert main(["query", "select 1", "--live", "--timeout", "30"]) == 0


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_the_row_limit_note_goes_to_stderr_for_csv_and_json_only(warehouse, capsys, fmt):
    _with_an_import(warehouse)
    sql = "select range as x from range(5)"
    assert main(["query", sql, "--live", "--limit", "2", "--format", fmt]) == 0
    captured = capsys.readouterr()
    if fmt == "table":
        assert captured.err == ""
    else:
        assert captured.err.strip() and "2" in captured.err
        assert main(["query", sql, "--live", "--limit", "9", "--format", fmt]) == 0
        assert capsys.readouterr().err == ""


def test_serve_dry_run_rates_nightly_only_when_asked(warehouse, capsys):
    def nightly() -> dict:
        lines = capsys.readouterr().out.splitlines()
        line = next(line for line in lines if line.startswith("tsrate-nightly\t"))
        return json.loads(line.split("\t")[3])

    assert main(["serve", "--dry-run"]) == 0
    assert nightly()["rate"] is False
    assert main(["serve", "--dry-run", "--nightly-rating"]) == 0
    assert nightly()["rate"] is True


def test_export_in_fevs_format_writes_one_summary_per_metric(tmp_path, monkeypatch, capsys):
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    snapshot.parent.mkdir()
    con = duckdb.connect(str(snapshot))
    con.execute("create schema marts")
    con.execute(
        "create table marts.leaderboard_tasks as select 'mase' as metric, 'naive' as system_id, "
        "'AAPL/P0' as task_id, 0.75 as test_error, 0.5 as inference_time_s, 12 as n_windows, "
        "'r1' as run_id"
    )
    con.execute(
        "create table published_runs as select 'r1' as run_id, "
        """'{"horizon": 5, "context_length": 30, "start": "2022-09-01"}' as study, """
        "now()::timestamp as published_at"
    )
    con.close()
    monkeypatch.setenv("TSRATE_PUBLISHED", str(snapshot))
    destination = tmp_path / "fev"
    assert main(["export", "--format", "fev", str(destination)]) == 0
    assert capsys.readouterr().out == (
        f"wrote 1 fev evaluation summaries of {snapshot} to {destination}\n"
    )
    written = (destination / "mase.csv").read_text().splitlines()
    assert len(written) == 2 and "AAPL/P0" in written[1] and "0.75" in written[1]
