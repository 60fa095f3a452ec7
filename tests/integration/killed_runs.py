"""`tsrate run` started as a user starts it, paused at a stage and killed there (a child
process: integration tests only). No test here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tsrate.config import project_dir

SELECT = "+window_errors"  # the error mart and its upstream: a short dbt build
RUN_FLAGS = [
    "--tickers", "AAPL,MSFT", "--start", "2022-09-01", "--end", "2022-12-28",
    "--context-length", "30", "--horizon", "5", "--systems", "naive,biased",
    "--perturbations", "P0,P1", "--workers", "1", "--select", SELECT,
]  # fmt: skip
#: RUN_FLAGS' study as a flow's ``overrides`` (the pipeline flow, serve's deployments)
OVERRIDES = {
    "study_tickers": "AAPL,MSFT",
    "study_start": "2022-09-01",
    "study_end": "2022-12-28",
    "context_length": 30,
    "horizon": 5,
    "systems": "naive,biased",
    "perturbations": "P0,P1",
}


def run_environment(tmp_path: Path, warehouse: Path, **extra: str) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    env = dict(os.environ)  # DBT_TARGET_PATH: the session's (tests/conftest.py), parse kept
    env.update(
        TSRATE_WAREHOUSE=str(warehouse),
        PREFECT_API_URL=str(PREFECT_API_URL.value()),
        PYTHONPATH=f"{project_dir() / 'src'}{os.pathsep}{project_dir()}",  # this checkout's
    )
    env.pop("TSRATE_PUBLISHED", None)
    env.update(extra)
    return env


def start_run(tmp_path: Path, warehouse: Path, log: Path, **extra: str) -> subprocess.Popen:
    with open(log, "w") as handle:
        return subprocess.Popen(
            [sys.executable, "-m", "tsrate.cli", "run", *RUN_FLAGS],
            cwd=project_dir(),
            env=run_environment(tmp_path, warehouse, **extra),
            stdout=handle,
            stderr=subprocess.STDOUT,
        )


def kill_at(tmp_path: Path, warehouse: Path, stage: str, while_paused=None) -> None:
    """Start `tsrate run`, wait until it pauses at ``stage``, call ``while_paused(pid)``,
    SIGKILL it."""
    marker = tmp_path / f"paused-{stage}"
    log = tmp_path / f"run-{stage}.log"
    process = start_run(
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
    if while_paused is not None:
        while_paused(process.pid)
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL
