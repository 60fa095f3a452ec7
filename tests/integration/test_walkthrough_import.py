"""Rating your own model as the docs tell a newcomer to: `tsrate import FILE --system ID`
rates and publishes it, so `tsrate query` and the report show it. The report is written from
the snapshot the import published (it used to stay the previous run's). `tsrate build`
afterwards publishes what it built, as `tsrate run` does (it used to refresh the live marts
only, and readers and BI tools stayed on the older snapshot): a new publication of the run,
in a Parquet folder of its own, and the report rewritten from it; `--no-publish` keeps the
snapshot as it is.

Run through ``tsrate.cli.main`` in this process on the tiny import study (two builds)."""

from __future__ import annotations

import duckdb
import pytest

from tests.support.import_study import external_p0_import, import_warehouse
from tsrate.cli import main
from tsrate.platform.publish import published_path
from tsrate.platform.warehouse import connect
from tsrate.robustness.report.data import default_report_path

pytestmark = pytest.mark.slow


@pytest.fixture
def warehouse(tmp_path, monkeypatch, dbt_target):
    monkeypatch.delenv("TSRATE_REPORT", raising=False)
    return import_warehouse(tmp_path, monkeypatch, dbt_target)


def _published_run(snapshot) -> str:
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        return con.execute(
            "select run_id from published_runs order by published_at desc limit 1"
        ).fetchone()[0]
    finally:
        con.close()


def _publications(snapshot) -> list[tuple[str, str]]:
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        return con.execute(
            "select run_id, parquet_path from published_runs order by published_at"
        ).fetchall()
    finally:
        con.close()


def test_an_import_writes_the_report_of_what_it_published_and_build_publishes_too(
    warehouse, tmp_path, capsys
):
    argv = external_p0_import(warehouse, tmp_path)
    assert main(argv) == 0
    last = capsys.readouterr().out.splitlines()[-1]

    snapshot = published_path(warehouse)
    run_id = _published_run(snapshot)
    report = default_report_path(snapshot)
    assert report.is_file(), "the import published a snapshot but wrote no report of it"
    text = report.read_text()
    assert run_id in text
    assert "external" in text
    assert last.endswith(f"; report: {report}")

    before = _publications(snapshot)
    report.write_text("the report of the import")
    assert main(["build", "--no-publish"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("built the live marts") and "not published" in out[-1]
    assert _publications(snapshot) == before  # left alone, as it says

    assert main(["build"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith(f"run {run_id} built and published to {snapshot}")
    assert out[-1].endswith(f"; report: {report}")
    # the same run published again: a new row, a Parquet folder of its own
    assert _publications(snapshot) == [*before, (run_id, f"parquet-runs/{run_id}.2")]
    assert (snapshot.parent / "parquet").resolve().name == f"{run_id}.2"
    assert run_id in report.read_text()  # the report was written again, from the new snapshot
    with connect(warehouse) as con:
        status = con.execute("select status from raw.runs where run_id = ?", [run_id]).fetchone()
    assert status == ("succeeded",)
