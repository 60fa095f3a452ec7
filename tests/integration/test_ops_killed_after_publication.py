"""A real `tsrate run` killed (SIGKILL) after its snapshot was swapped in and before it wrote
``succeeded`` (the test hook's ``published`` stage): readers already see its marts, and the
next run marks it succeeded, says so, instead of closing it interrupted."""

from __future__ import annotations

import pytest

from tests.integration.test_operations_end_to_end import _kill_at, _start_run
from tests.support.warehouses import read

pytestmark = pytest.mark.slow


def test_a_run_killed_after_its_publication_is_closed_succeeded(
    tmp_path, monkeypatch, prefect_harness
):
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    warehouse = tmp_path / "live" / "tsrate.duckdb"
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    _kill_at(tmp_path, warehouse, "published")
    (killed,) = read(snapshot, "select run_id from published_runs")["run_id"].tolist()
    stopped = read(warehouse, "select status from raw.runs where run_id = ?", [killed])
    assert stopped["status"].tolist() == ["publishing"]  # as the kill left it

    log = tmp_path / "run-next.log"
    process = _start_run(tmp_path, warehouse, log)
    assert process.wait(timeout=300) == 0, log.read_text()[-4000:]
    assert f"run {killed} was stopped after its publication: marked succeeded" in log.read_text()
    runs = read(warehouse, "select run_id, status, message from raw.runs order by started_at")
    assert runs["run_id"].iloc[0] == killed
    assert runs["status"].tolist() == ["succeeded", "succeeded"]
    assert runs["message"].iloc[0].startswith("published; the process stopped before")
