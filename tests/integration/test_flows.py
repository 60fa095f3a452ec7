"""The Prefect pipeline flow behind `tsrate run`, on a real temporary warehouse."""

from __future__ import annotations

import duckdb
import pytest

from tests.integration.helpers import read

pytestmark = pytest.mark.slow


def test_pipeline_flow_runs_end_to_end_and_releases_the_file(
    tmp_path, monkeypatch, prefect_harness
):
    from flows.pipeline import pipeline_flow

    warehouse = tmp_path / "tsrate.duckdb"
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target"))
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
