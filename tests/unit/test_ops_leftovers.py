"""Operations a user meets around a run, at the values they see: the progress share (floored:
100 % only once every item is done), in the run's line and in ``tsrate status``; one log file
per build, however close two builds start; a publication whose swap fails leaves nothing of
itself, and the previous one whole; a run killed after its publication is closed succeeded."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import duckdb
import pytest

from tests.support.publish_warehouse import scored_warehouse
from tests.support.published_runs import listed_rows, warehouse_env
from tsrate import TsrateError, cli
from tsrate.platform.locking import writer_lock
from tsrate.platform.progress import Progress, phase
from tsrate.platform.publish import publish


@pytest.fixture
def warehouse(tmp_path, monkeypatch):
    return warehouse_env(tmp_path / "tsrate.duckdb", monkeypatch)


@pytest.mark.parametrize(
    ("done", "total", "share"),
    [(199, 200, " 99%"), (1, 200, "  0%"), (2, 3, " 66%"), (1, 3, " 33%"), (200, 200, "100%")],
)
def test_the_progress_share_is_floored_so_100_percent_means_done(done, total, share):
    now = [0.0]
    lines: list[str] = []
    progress = Progress(["naive"] * total, lines.append, tty=False, clock=lambda: now[0])
    now[0] = 10.0
    progress.update_many([("naive", f"naive T{i}", 0.05) for i in range(done)])
    assert lines[-1].startswith(f"[{done}/{total}] {share} naive T{done - 1}")
    assert progress.line("naive last").startswith(f"[{done}/{total}] {share} naive last")


def test_status_shows_a_job_at_199_of_200_as_99_percent(warehouse, capsys):
    with writer_lock(warehouse), phase("forecast", lambda _: None):
        progress = Progress(["naive"] * 200, lambda _: None, tty=False)
        progress.update_many([("naive", "naive AAPL P0", 0.01)] * 199)
        assert cli.main(["status"]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert lines["now"].startswith("forecast: [199/200]  99% naive AAPL P0 ETA ")


def test_two_build_logs_started_in_one_instant_get_two_files(tmp_path):
    """Two builds of one run started in the same millisecond (two warehouses in one folder,
    two processes): each gets its own log file, the first left as it was."""
    from tsrate.platform.dbt_runner import new_log_file

    now = 1_796_000_000.25
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now)) + ".250"
    first = new_log_file(tmp_path / "logs", "dbt-build-run-7", now)
    first.write_text("the first build's lines\n")
    second = new_log_file(tmp_path / "logs", "dbt-build-run-7", now)
    third = new_log_file(tmp_path / "logs", "dbt-build-run-7", now)
    assert first.name == f"dbt-build-run-7-{stamp}.log"
    assert second.name == f"dbt-build-run-7-{stamp}-2.log"
    assert third.name == f"dbt-build-run-7-{stamp}-3.log"
    assert first.read_text() == "the first build's lines\n" and second.read_text() == ""
    # what reads a run's logs back (the tests, a user's glob) finds all three
    assert set((tmp_path / "logs").glob("dbt-build-run-7-*.log")) == {first, second, third}
    later = new_log_file(tmp_path / "logs", "dbt-build-run-7", now + 0.001)
    assert later.name == f"dbt-build-run-7-{stamp[:-3]}251.log"


def _published_files(published: Path) -> dict[str, bytes | str]:
    """Every file and link under ``published``: a link by where it points, a file by its bytes."""
    return {
        str(path.relative_to(published)): (
            os.readlink(path) if path.is_symlink() else path.read_bytes()
        )
        for path in sorted(published.rglob("*"))
        if path.is_symlink() or path.is_file()
    }


def test_a_failed_parquet_link_swap_leaves_nothing_of_its_publication(tmp_path):
    """The link is a real folder (a user copied the Parquet files over it): the publish of
    run-b fails with one line, and neither its snapshot nor its Parquet folder is left behind
    for the next publish to find; run-a's publication is as it was."""
    warehouse, published = tmp_path / "tsrate.duckdb", tmp_path / "published"
    scored_warehouse(warehouse, "run-a", rows=2)
    publish(warehouse, "run-a")
    link = published / "parquet"
    link.unlink()
    shutil.copytree(published / "parquet-runs" / "run-a", link)
    before = _published_files(published)
    scored_warehouse(warehouse, "run-b", rows=3)
    with pytest.raises(TsrateError, match="is a real folder, not the link") as failed:
        publish(warehouse, "run-b")
    assert "\n" not in str(failed.value)
    assert _published_files(published) == before  # nothing of run-b: no snapshot, no folder
    assert sorted(p.name for p in (published / "parquet-runs").iterdir()) == ["run-a"]


def test_a_failed_snapshot_rename_points_the_parquet_link_back(tmp_path):
    """The DuckDB file cannot be renamed over the snapshot (here a folder stands there by the
    time of the swap) after the link was swapped: the link goes back to run-a's folder and
    run-b's folder and snapshot are removed."""
    warehouse, published = tmp_path / "tsrate.duckdb", tmp_path / "published"
    scored_warehouse(warehouse, "run-a", rows=2)
    publish(warehouse, "run-a")
    snapshot = published / "tsrate.duckdb"

    def block_the_snapshot() -> None:  # just before the swap
        saved = snapshot.read_bytes()
        snapshot.unlink()
        snapshot.mkdir()
        (snapshot / "kept").write_bytes(saved)

    before = _published_files(published)
    scored_warehouse(warehouse, "run-b", rows=3)
    with pytest.raises(OSError):
        publish(warehouse, "run-b", before_swap=block_the_snapshot)
    after = _published_files(published)
    assert after.pop("tsrate.duckdb/kept") == before.pop("tsrate.duckdb")
    assert after == before
    assert os.readlink(published / "parquet") == "parquet-runs/run-a"
    assert sorted(p.name for p in (published / "parquet-runs").iterdir()) == ["run-a"]


def test_a_failed_first_publication_leaves_no_link(tmp_path):
    warehouse, published = tmp_path / "tsrate.duckdb", tmp_path / "published"
    scored_warehouse(warehouse, "run-a", rows=2)
    snapshot = published / "tsrate.duckdb"
    with pytest.raises(OSError):
        publish(warehouse, "run-a", before_swap=lambda: (snapshot / "blocked").mkdir(parents=True))
    assert sorted(str(p.relative_to(published)) for p in published.rglob("*")) == [
        "parquet-runs", "tsrate.duckdb", "tsrate.duckdb/blocked"
    ]  # fmt: skip


def test_a_run_stopped_after_its_publication_is_closed_succeeded_not_interrupted(
    tmp_path, monkeypatch
):
    """The process was killed between the snapshot swap and writing ``succeeded``: the next
    run (here the pipeline's closing step, under the lock) finds the run's publication in
    the snapshot and marks it succeeded; runs stopped before their swap stay interrupted."""
    from flows.pipeline import _close_interrupted_runs
    from tests.support.publish_warehouse import runs_table

    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    warehouse = tmp_path / "tsrate.duckdb"
    states = ["publishing", "publishing", "building", "succeeded", "running"]
    runs_table(warehouse, [(f"r{i}", f"2026-01-0{i + 1}", s) for i, s in enumerate(states)])
    source = tmp_path / "source" / "tsrate.duckdb"
    source.parent.mkdir()
    for run_id in ("r3", "r0"):  # r0 published, then killed before it said so
        scored_warehouse(source, run_id, rows=2)
        publish(source, run_id, target=tmp_path / "published" / "tsrate.duckdb")
    closed = _close_interrupted_runs(str(warehouse))
    assert closed == [("r1", "publishing"), ("r2", "building"), ("r4", "running")]
    with duckdb.connect(str(warehouse), read_only=True) as con:
        after = {row[0]: row[1:] for row in con.execute("from raw.runs").fetchall()}
    assert {run_id: row[2] for run_id, row in after.items()} == {
        "r0": "succeeded",
        "r1": "interrupted",  # publishing, but its snapshot was never swapped in
        "r2": "interrupted",
        "r3": "succeeded",
        "r4": "interrupted",
    }
    assert after["r0"][1] is not None  # finished
    assert after["r0"][3].startswith("published; the process stopped before it marked")
    assert after["r3"][3] == "succeeded because of r3"  # a finished run is left alone
    assert _close_interrupted_runs(str(warehouse)) == []


def test_no_snapshot_or_an_unreadable_one_reconciles_nothing(tmp_path):
    from tsrate.platform.publish import published_run_ids

    assert published_run_ids(tmp_path / "none.duckdb") == set()
    (tmp_path / "broken.duckdb").write_bytes(b"not a database" * 100)
    assert published_run_ids(tmp_path / "broken.duckdb") == set()


def _import_run_warehouse(path: Path, run_id: str) -> None:
    """A live warehouse whose run ``run_id`` rates an imported system: ``raw.runs.systems``
    holds it beside the study's own (as ``tsrate import`` leaves them), the study does not."""
    from tsrate.config import Study

    study = Study.from_mapping(
        {
            "study_tickers": ["AAPL", "MSFT"],
            "study_start": "2022-01-03",
            "study_end": "2022-06-30",
            "systems": ["naive"],
        }
    )
    with duckdb.connect(str(path)) as con:
        for schema in ("raw", "marts", "seeds"):
            con.execute(f"create schema if not exists {schema}")
        con.execute(
            "create table if not exists raw.runs (run_id varchar, study json, systems varchar[])"
        )
        con.execute(
            "insert into raw.runs values (?, ?, ['naive', 'acme-model'])",
            [run_id, study.to_json()],
        )
        con.execute("create or replace table marts.scores as select 1 as score")


def _runs_during_a_write(warehouse: Path, capsys) -> dict[str, dict[str, str]]:
    with writer_lock(warehouse), phase("forecast", lambda _: None):
        assert cli.main(["runs"]) == 0
    # by column (an empty cell, e.g. rated, is blanks)
    return {row["run_id"]: row for row in listed_rows(capsys.readouterr().out)}


def test_runs_during_a_write_lists_an_imported_system_of_a_published_run(warehouse, capsys):
    _import_run_warehouse(warehouse, "import-run")
    publish(warehouse, "import-run")
    rows = _runs_during_a_write(warehouse, capsys)
    assert rows["import-run"]["systems"] == "naive,acme-model"
    assert rows["import-run"]["tickers"] == "AAPL,MSFT"
    snapshot = warehouse.parent / "published"
    with duckdb.connect(str(snapshot / "tsrate.duckdb"), read_only=True) as con:
        assert con.execute("select systems from published_runs").fetchall() == [
            (["naive", "acme-model"],)
        ]
        described = con.execute(
            "select comment from duckdb_columns() where table_name = 'published_runs' "
            "and column_name = 'systems'"
        ).fetchone()[0]
    assert "imported ones included" in described
    parquet = duckdb.sql(f"select systems from '{snapshot}/parquet/published_runs.parquet'")
    assert parquet.fetchall() == [(["naive", "acme-model"],)]


def test_a_snapshot_from_before_the_systems_column_stays_readable(warehouse, capsys):
    """An older snapshot's published_runs has no systems column: `tsrate runs` reads its
    runs' systems from their studies, and the next publication keeps its rows (systems
    null) beside its own."""
    from tsrate.config import Study

    study = Study.from_mapping(
        {
            "study_tickers": ["AAPL"],
            "study_start": "2022-01-03",
            "study_end": "2022-06-30",
            "systems": ["naive", "arima"],
        }
    )
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    snapshot.parent.mkdir(parents=True)
    with duckdb.connect(str(snapshot)) as con:
        con.execute(
            "create table published_runs (run_id varchar, published_at timestamp, "
            "study json, row_counts json, parquet_path varchar)"
        )
        con.execute(
            "insert into published_runs values ('old-run', '2026-12-01 10:00', ?, '{}', null)",
            [study.to_json()],
        )
    assert _runs_during_a_write(warehouse, capsys)["old-run"]["systems"] == "naive,arima"
    _import_run_warehouse(warehouse, "import-run")
    publish(warehouse, "import-run")
    with duckdb.connect(str(snapshot), read_only=True) as con:
        recorded = con.execute(
            "select run_id, systems from published_runs order by published_at"
        ).fetchall()
    assert recorded == [("old-run", None), ("import-run", ["naive", "acme-model"])]
    rows = _runs_during_a_write(warehouse, capsys)
    assert rows["old-run"]["systems"] == "naive,arima"
    assert rows["import-run"]["systems"] == "naive,acme-model"
