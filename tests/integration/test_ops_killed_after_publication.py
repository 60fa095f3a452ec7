"""A real `tsrate run` killed (SIGKILL) after its snapshot was swapped in and before it wrote
``succeeded`` (the test hook's ``published`` stage): readers already see its marts, and the
next run marks it succeeded, says so, instead of closing it interrupted."""

from __future__ import annotations

import pytest

from tests.integration.killed_runs import kill_at, start_run
from tests.support.warehouses import read

pytestmark = pytest.mark.slow


def test_a_run_killed_after_its_publication_is_closed_succeeded(
    tmp_path, monkeypatch, prefect_harness
):
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    warehouse = tmp_path / "live" / "tsrate.duckdb"
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    kill_at(tmp_path, warehouse, "published")
    (killed,) = read(snapshot, "select run_id from published_runs")["run_id"].tolist()
    stopped = read(warehouse, "select status from raw.runs where run_id = ?", [killed])
    assert stopped["status"].tolist() == ["publishing"]  # as the kill left it

    log = tmp_path / "run-next.log"
    process = start_run(tmp_path, warehouse, log)
    assert process.wait(timeout=300) == 0, log.read_text()[-4000:]
    assert f"run {killed} was stopped after its publication: marked succeeded" in log.read_text()
    runs = read(warehouse, "select run_id, status, message from raw.runs order by started_at")
    assert runs["run_id"].iloc[0] == killed
    assert runs["status"].tolist() == ["succeeded", "succeeded"]
    assert runs["message"].iloc[0].startswith("published; the process stopped before")


def test_tsrate_build_closes_a_run_stopped_after_its_publication_succeeded(
    tmp_path, monkeypatch, capsys
):
    """`tsrate build` closes stopped runs first, as a run does: here one whose publication
    is in the snapshot (marked succeeded, said) and one that never got there (interrupted);
    the build itself then stops at its unknown --study, before any dbt build."""
    import duckdb

    from tests.support.publish_warehouse import scored_warehouse
    from tsrate.cli import main
    from tsrate.config import Study
    from tsrate.platform.publish import publish
    from tsrate.platform.raw_schema import create_raw_tables

    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    warehouse = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))
    study = Study.from_mapping(
        {"study_tickers": ["AAPL"], "study_start": "2022-09-01", "study_end": "2022-12-28"}
    )
    with duckdb.connect(str(warehouse)) as con:
        create_raw_tables(con)
        for run_id, started in (("published-run", "2026-12-01"), ("cut-run", "2026-12-02")):
            con.execute(
                "insert into raw.runs values (?, ?, null, 'publishing', ?, ?, ['AAPL'], "
                "['naive'], ['P0'], '2022-09-01', '2022-12-28', 80, 20, 1, 0, null)",
                [run_id, started, study.study_hash, study.to_json()],
            )
    source = tmp_path / "source" / "tsrate.duckdb"
    source.parent.mkdir()
    scored_warehouse(source, "published-run", rows=2)
    publish(source, "published-run", target=tmp_path / "published" / "tsrate.duckdb")
    assert main(["build", "--study", "no-such-study"]) == 2
    out, err = capsys.readouterr()
    assert "run published-run was stopped after its publication: marked succeeded" in out
    assert "run cut-run was stopped while publishing: marked interrupted" in out
    assert "no study 'no-such-study'" in err
    statuses = read(warehouse, "select run_id, status from raw.runs order by run_id")
    assert statuses.values.tolist() == [["cut-run", "interrupted"], ["published-run", "succeeded"]]
