"""Operations end to end: `tsrate run` killed (SIGKILL) at each stage, Parquet publishing, the lock.

The kill test drives real `tsrate run` processes on a tiny study. Each is told by the test
hook ``TSRATE_TEST_PAUSE_AT=<stage>`` (tsrate.testhooks) to stop at one stage, then killed
there; the published snapshot must stay byte-identical and queryable, and the run after the
kills must produce the marts of an uninterrupted run. Child processes talk to the test's
Prefect API (no ephemeral server start per process).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.integration.helpers import ERROR_MARTS, read
from tsrate.config import project_dir

pytestmark = pytest.mark.slow

OVERRIDES = {
    "study_tickers": "AAPL,MSFT",
    "study_start": "2022-09-01",
    "study_end": "2022-12-28",
    "context_length": 30,
    "horizon": 5,
    "systems": "naive,biased",
    "perturbations": "P0,P1",
}
RUN_FLAGS = [
    "--tickers", "AAPL,MSFT", "--start", "2022-09-01", "--end", "2022-12-28",
    "--context-length", "30", "--horizon", "5", "--systems", "naive,biased",
    "--perturbations", "P0,P1", "--workers", "1", "--select", ERROR_MARTS,
]  # fmt: skip
PARTITIONS = 2 * 2 * 2  # tickers × systems × perturbations


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _environment(tmp_path: Path, warehouse: Path, **extra: str) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    env = dict(os.environ)
    env.update(
        TSRATE_WAREHOUSE=str(warehouse),
        DBT_TARGET_PATH=str(tmp_path / "target-cli"),
        PREFECT_API_URL=str(PREFECT_API_URL.value()),
        PYTHONPATH=str(project_dir()),
    )
    env.pop("TSRATE_PUBLISHED", None)
    env.update(extra)
    return env


def _start_run(tmp_path: Path, warehouse: Path, log: Path, **extra: str) -> subprocess.Popen:
    with open(log, "w") as handle:
        return subprocess.Popen(
            [sys.executable, "-m", "tsrate.cli", "run", *RUN_FLAGS],
            cwd=project_dir(),
            env=_environment(tmp_path, warehouse, **extra),
            stdout=handle,
            stderr=subprocess.STDOUT,
        )


def _kill_at(tmp_path: Path, warehouse: Path, stage: str) -> None:
    """Start `tsrate run`, wait until it pauses at ``stage``, SIGKILL it."""
    marker = tmp_path / f"paused-{stage}"
    log = tmp_path / f"run-{stage}.log"
    process = _start_run(
        tmp_path,
        warehouse,
        log,
        TSRATE_TEST_PAUSE_AT=stage,
        TSRATE_TEST_PAUSE_FILE=str(marker),
    )
    deadline = time.monotonic() + 240
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"`tsrate run` never paused at {stage}:\n{log.read_text()[-4000:]}")
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL


def _assert_released(warehouse: Path) -> None:
    """Nothing (no orphaned dbt either) holds the live file: a read-write open succeeds."""
    deadline = time.monotonic() + 10
    while True:
        try:
            duckdb.connect(str(warehouse)).close()
            return
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _marts(snapshot: Path) -> dict[str, pd.DataFrame]:
    """Every published mart, run ids left out (they differ between runs by design)."""
    con = duckdb.connect(str(snapshot), read_only=True)
    try:
        names = [
            row[0]
            for row in con.execute(
                "select table_name from duckdb_tables() where schema_name = 'marts' order by 1"
            ).fetchall()
        ]
        frames = {}
        for name in names:
            columns = [row[0] for row in con.execute(f"describe marts.{name}").fetchall()]
            exclude = " exclude (run_id)" if "run_id" in columns else ""
            frames[name] = con.execute(f"select *{exclude} from marts.{name} order by all").df()
        return frames
    finally:
        con.close()


def test_killed_runs_leave_the_snapshot_intact_and_the_next_run_resumes(
    tmp_path, monkeypatch, capsys, prefect_harness
):
    from flows.pipeline import pipeline_flow
    from tsrate.cli import main

    # an uninterrupted run of the study: the reference marts, and a snapshot to protect
    reference = tmp_path / "reference" / "tsrate.duckdb"
    monkeypatch.setenv("DBT_TARGET_PATH", str(tmp_path / "target-reference"))
    monkeypatch.delenv("TSRATE_PUBLISHED", raising=False)
    first_run = pipeline_flow(
        overrides=OVERRIDES, workers=1, warehouse=str(reference), select=ERROR_MARTS
    )
    reference_snapshot = reference.parent / "published" / "tsrate.duckdb"
    expected = _marts(reference_snapshot)
    assert expected and all(len(frame) for frame in expected.values())

    # a warehouse whose published snapshot came from that run, its live file still empty
    warehouse = tmp_path / "live" / "tsrate.duckdb"
    snapshot = warehouse.parent / "published" / "tsrate.duckdb"
    snapshot.parent.mkdir(parents=True)
    shutil.copy(reference_snapshot, snapshot)
    published = _digest(snapshot)
    monkeypatch.setenv("TSRATE_WAREHOUSE", str(warehouse))

    for stage in ("ingest", "inference", "build", "publish"):
        _kill_at(tmp_path, warehouse, stage)
        assert _digest(snapshot) == published, f"killed at {stage}: the snapshot changed"
        capsys.readouterr()
        assert main(["query", "select run_id from published_runs"]) == 0
        assert first_run in capsys.readouterr().out
        if warehouse.exists():
            _assert_released(warehouse)
        if stage == "ingest":  # killed inside the price load: nothing half-stored
            assert read(warehouse, "select count(*) n from raw.prices")["n"][0] == 0
        if stage == "inference":  # one partition landed before the kill
            stored = read(warehouse, "select count(*) n from raw.forecast_partitions")["n"][0]
            assert stored == 1
        if stage == "publish":  # the new files were written, never swapped in
            assert list(snapshot.parent.glob(".*.partial"))

    # the next run resumes: every partition reused, marts as the uninterrupted run's
    log = tmp_path / "run-final.log"
    process = _start_run(tmp_path, warehouse, log)
    assert process.wait(timeout=300) == 0, log.read_text()[-4000:]
    runs = read(warehouse, "select run_id, status from raw.runs order by started_at")
    final_run = runs["run_id"].iloc[-1]
    assert runs["status"].iloc[-1] == "succeeded"
    assert "running" not in set(runs["status"])  # the killed inference run was closed
    assert "interrupted" in set(runs["status"])
    reuse = read(
        warehouse,
        "select count_if(reused) reused, count(*) n from raw.run_partitions where run_id = ?",
        [final_run],
    )
    assert reuse["reused"][0] == PARTITIONS and reuse["n"][0] == PARTITIONS
    dupes = read(
        warehouse,
        "select count(*) n from (select system_id, ticker, window_end_date, perturbation_id, "
        "horizon_step from raw.forecasts group by all having count(*) > 1)",
    )
    assert dupes["n"][0] == 0
    history = read(snapshot, "select run_id from published_runs order by published_at")
    assert history["run_id"].tolist() == [first_run, final_run]
    resumed = _marts(snapshot)
    assert resumed.keys() == expected.keys()
    for name, frame in expected.items():
        pd.testing.assert_frame_equal(resumed[name], frame, obj=f"marts.{name}")
    assert not list(snapshot.parent.glob(".*.partial"))  # leftovers of the kill removed
    # the Parquet copy is the new run's
    parquet = snapshot.parent / "parquet"
    assert parquet.resolve().name == final_run
    pd.testing.assert_frame_equal(
        pd.read_parquet(parquet / "marts" / "window_errors.parquet")
        .drop(columns="run_id")
        .sort_values(list(expected["window_errors"].columns))
        .reset_index(drop=True),
        expected["window_errors"],
        check_dtype=False,
    )
