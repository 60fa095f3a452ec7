"""The Prefect flows (``flows/``) on the paths that start a process: a dbt build, the
forecast workers' fork server. Run in this process as plain functions (no Prefect API).

Written for round 10 of the mutation sweep (tests/planted/mutate.py; its survivors are
tests/planted/sweep10_flows.json); the in-process paths are
tests/unit/test_sweep10_flows.py's. What is pinned, for ``flows/pipeline.py``: a run rates
by default (a build, then ``succeeded``), its build releases the warehouse to the
publication while the data tests run, and the seconds its last line reports are the run's
own; a failing build marks the run ``build_failed`` with the last 2,000 characters of
dbt's error; the fork server starts ahead only when the run will use worker processes.
For ``flows/build.py``: a build waits for its data tests unless asked to release early
(the pipeline's test above asks), and the seconds it reports are its own.
"""

from __future__ import annotations

import logging
import re
import time

import pytest

from flows.build import build_flow
from flows.pipeline import pipeline_flow
from tests.support.warehouses import rows as _rows
from tsrate.platform import dbt_runner as dbt

pytestmark = pytest.mark.slow

#: one ticker, one system, one perturbation: one partition, forecast in this process
STUDY = {"study_tickers": "AAPL", "study_start": "2022-09-01", "study_end": "2022-11-30",
         "context_length": 30, "horizon": 5, "systems": "naive", "perturbations": "P0"}  # fmt: skip


@pytest.fixture
def warehouse(tmp_path, monkeypatch, dbt_target):
    """``tsrate.duckdb`` (the name the profile gives) built in the session's dbt target."""
    monkeypatch.setenv("DBT_TARGET_PATH", str(dbt_target))
    yield tmp_path / "tsrate.duckdb"
    dbt.discard_prepared()
    dbt.discard_pending()


def test_a_run_rates_by_default_publishing_beside_the_data_tests(warehouse, caplog):
    caplog.set_level(logging.INFO, logger="tsrate.run")
    started = time.perf_counter()
    run_id = pipeline_flow.fn(overrides=STUDY, source="skfolio", workers=1,
                              warehouse=str(warehouse), select="+window_errors")  # fmt: skip
    elapsed = time.perf_counter() - started
    assert _rows(warehouse, "select run_id, status from raw.runs") == [(run_id, "succeeded")]
    assert _rows(warehouse, "select distinct run_id from marts.window_errors") == [(run_id,)]
    # release_early: the build returned with its data tests still running
    (built,) = re.findall(r"dbt models built in ([\d.]+)s; data tests running", caplog.text)
    assert 0 <= float(built) <= elapsed + 0.05  # the build's own time, to the 0.1 s shown
    assert "dbt build finished" not in caplog.text
    assert "partial build (--select +window_errors): no report written" in caplog.text
    (seconds,) = re.findall(rf"run {run_id} succeeded in ([\d.]+)s", caplog.text)
    assert 0 <= float(seconds) <= elapsed + 0.05  # the run's own time, to the 0.1 s shown


def test_a_failing_build_marks_the_run_build_failed_with_the_errors_tail(warehouse):
    """An unknown selector method fails dbt; its error (longer than 2,000 characters: it
    repeats the selector) is raised, and its last 2,000 characters stored."""
    selector = "nosuchmethod:" + "x" * 2100
    with pytest.raises(dbt.DbtError) as failed:
        pipeline_flow.fn(overrides=STUDY, source="skfolio", workers=1,
                         warehouse=str(warehouse), select=selector)  # fmt: skip
    error = str(failed.value)
    assert len(error) > 2001 and error.startswith("dbt ")
    ((status, message),) = _rows(warehouse, "select status, message from raw.runs")
    assert (status, message) == ("build_failed", error[len(error) - 2000 :])


_FORK_SERVER = """
import json, os, sys
from flows.pipeline import pipeline_flow
from tsrate.robustness.forecast.workers import server_running

study, missing, warehouse = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
seen = {"before": server_running()}
for workers in (1, None):
    try:
        pipeline_flow.fn(overrides=study, source="file", path=missing, workers=workers,
                         warehouse=warehouse, rate=False)
    except Exception as exc:
        seen[f"error {workers}"] = "no-such-prices" in str(exc)
    seen[f"after {workers}"] = server_running()
print(json.dumps(seen))
"""


def test_the_fork_server_starts_ahead_only_for_a_run_with_worker_processes(tmp_path):
    """``workers=1`` computes in this process: no fork server; the default (a process per
    core) on a new warehouse starts it before the prices are read (here: a missing file,
    so the run fails right after). In a fresh interpreter: a process keeps the first fork
    server it starts (an earlier test file on the same worker may have started one)."""
    import json

    from tests.integration.scripts import run_script

    seen = run_script(
        _FORK_SERVER,
        json.dumps(STUDY),
        str(tmp_path / "no-such-prices.csv"),
        str(tmp_path / "w.duckdb"),
        unset=("TSRATE_WORKER_START", "TSRATE_DASK_ADDRESS"),
    )
    assert seen == {
        "before": False,
        "error 1": True,
        "after 1": False,
        "error None": True,
        "after None": True,
    }


def test_the_build_flow_waits_for_the_data_tests_by_default(warehouse, caplog):
    """``release_early`` defaults to False: the build returns with its data tests done,
    and says it finished, in its own seconds."""
    run_id = pipeline_flow.fn(overrides=STUDY, source="skfolio", workers=1,
                              warehouse=str(warehouse), rate=False)  # fmt: skip
    caplog.set_level(logging.INFO, logger="tsrate.run")
    started = time.perf_counter()
    build_flow.fn(run_id=run_id, warehouse=str(warehouse), select="+window_errors")
    elapsed = time.perf_counter() - started
    assert not dbt.pending_build(warehouse)
    (seconds,) = re.findall(r"dbt build finished in ([\d.]+)s", caplog.text)
    assert 0 <= float(seconds) <= elapsed + 0.05
    assert "data tests running" not in caplog.text
    assert _rows(warehouse, "select distinct run_id from marts.window_errors") == [(run_id,)]
