"""The Prefect pipeline flow behind `tsrate run`, on a real temporary warehouse."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from tests.support.warehouses import read

pytestmark = pytest.mark.slow


def test_pipeline_flow_runs_end_to_end_and_releases_the_file(
    tmp_path, monkeypatch, prefect_harness
):
    from flows.pipeline import pipeline_flow

    warehouse = tmp_path / "tsrate.duckdb"
    overrides = {
        "study_tickers": "AAPL,PFE",
        "study_start": "2022-09-01",
        "study_end": "2022-12-28",
        "context_length": 30,
        "horizon": 5,
        "systems": "naive,biased",
    }
    run_id = pipeline_flow(overrides=overrides, source="auto", workers=1, warehouse=str(warehouse))

    runs = read(warehouse, "select run_id, status from raw.runs")
    assert runs.set_index("run_id").loc[run_id, "status"] == "succeeded"
    # auto source: the bundled sample was ingested because the study tickers were missing
    assert read(warehouse, "select count(distinct ticker) n from raw.prices")["n"][0] == 20
    errors = read(warehouse, "select distinct run_id, system_id, ticker from marts.window_errors")
    assert set(errors["run_id"]) == {run_id}
    assert set(errors["ticker"]) == {"AAPL", "PFE"}
    duckdb.connect(str(warehouse)).close()  # nobody holds the file any more
    # dbt was started and parsed while the forecasts ran; the build used that child
    (build_log,) = (tmp_path / "logs").glob(f"dbt-build-{run_id}-*.log")
    assert "build started (dbt was started and parsed ahead)" in build_log.read_text()

    # the marts were published to the read-only snapshot beside the warehouse
    snapshot = tmp_path / "published" / "tsrate.duckdb"
    published = read(snapshot, "select run_id from published_runs")
    assert published["run_id"].tolist() == [run_id]
    live_rows = read(warehouse, "select * from marts.window_errors order by all")
    pd.testing.assert_frame_equal(
        read(snapshot, "select * from marts.window_errors order by all"), live_rows
    )
    comment = read(
        snapshot, "select comment from duckdb_tables() where table_name = 'window_errors'"
    )
    assert "One row per system, ticker, window and perturbation" in comment["comment"][0]
    # the report was rendered beside the Parquet export, from the new file before its
    # rename: the same page as a render of the published snapshot (to the minute shown)
    import re

    from tsrate.robustness.report.render import write_report

    page = (tmp_path / "published" / "report.html").read_text()
    assert "snapshot <code>tsrate.duckdb</code>" in page and ".partial</code>" not in page
    again = write_report(snapshot, tmp_path / "again" / "report.html").path.read_text()
    stamp = re.compile(r"generated \S+ \S+ UTC")
    assert stamp.sub("generated", page) == stamp.sub("generated", again)

    # unknown system: a clear error, and the failed run does not replace the marts
    with pytest.raises(Exception, match="unknown system 'nope'"):
        pipeline_flow(
            overrides={**overrides, "systems": "naive,nope"},
            source="none",
            warehouse=str(warehouse),
        )
    assert set(read(warehouse, "select distinct run_id from marts.window_errors")["run_id"]) == {
        run_id
    }
    from tsrate.platform import dbt_runner as dbt

    assert dbt._PREPARED == {}  # the child started ahead for the failed run was stopped
    assert read(snapshot, "select run_id from published_runs")["run_id"].tolist() == [run_id]


def test_publish_swaps_atomically_under_an_open_reader(tmp_path, dbt_target):
    from tests.integration.builds import forecast_and_build
    from tests.support.warehouses import ingest, small_study
    from tsrate.platform.publish import publish

    warehouse = tmp_path / "tsrate.duckdb"
    ingest(warehouse, ["AAPL", "MSFT"])
    tickers = ["AAPL", "MSFT"]
    study = small_study(study_tickers=tickers, systems=["naive"], perturbations=["P0"])
    first = forecast_and_build(warehouse, study, dbt_target)
    snapshot = publish(warehouse, first).path
    reader = duckdb.connect(str(snapshot), read_only=True)  # a dashboard holding the old file
    try:
        study_two = small_study(
            study_tickers=tickers, systems=["naive", "biased"], perturbations=["P0"]
        )
        second = forecast_and_build(warehouse, study_two, dbt_target)
        publish(warehouse, second)  # neither blocked by the reader nor visible to it
        old = reader.execute("select distinct system_id from marts.window_errors").fetchall()
        assert {row[0] for row in old} == {"naive"}
    finally:
        reader.close()
    fresh = read(snapshot, "select distinct system_id from marts.window_errors")
    assert set(fresh["system_id"]) == {"naive", "biased"}
    history = read(snapshot, "select run_id from published_runs order by published_at")
    assert history["run_id"].tolist() == [first, second]
    assert not list(snapshot.parent.glob("*.partial"))

    # beside: a reader of the new file (the run's report) gets it complete and read-only
    # before the Parquet export, and is waited for before the file is renamed; a failing
    # before_swap (the run's data tests) leaves the previous publication and no leftovers
    events: list[str] = []

    def beside(staging):
        events.append(f"beside {staging.name}")
        con = duckdb.connect(str(staging), read_only=True)  # beside the export's own
        try:
            runs = con.execute("select run_id from published_runs order by published_at")
            events.append(f"runs {[row[0] for row in runs.fetchall()]}")
        finally:
            con.close()
        return lambda: events.append("waited")

    def tests_failed():
        events.append("before_swap")
        raise RuntimeError("data tests failed")

    third = forecast_and_build(warehouse, study_two, dbt_target)
    with pytest.raises(RuntimeError, match="data tests failed"):
        publish(warehouse, third, before_swap=tests_failed, beside=beside)
    assert events == [
        f"beside .{snapshot.name}.{third}.partial",
        f"runs {[first, second, third]}",
        "waited",
        "before_swap",
    ]
    assert read(snapshot, "select run_id from published_runs")["run_id"].tolist() == [
        first,
        second,
    ]
    assert not list(snapshot.parent.glob(".*.partial"))
    assert not (snapshot.parent / "parquet-runs" / third).exists()
    assert (snapshot.parent / "parquet").resolve().name == second
