"""`TSRATE_PREFECT=always tsrate run`: the run is orchestrated on tsrate's own temporary
server, and only there. The thread that follows the dbt build's output logs its lines
through Prefect's run logger, but a new thread does not inherit the flow's Prefect context
(the API URL of tsrate's server is a context-local setting), so Prefect started a second
temporary server of its own for those lines ("Starting temporary server on ...": tens of
CPU-seconds on a 2-core box) in the middle of the build."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tsrate.config import project_dir

pytestmark = pytest.mark.slow

TINY_RUN = ["run", "--tickers", "AAPL", "--systems", "naive,random", "--perturbations", "P0,P1",
            "--stride", "40", "--workers", "1"]  # fmt: skip


def test_an_orchestrated_run_starts_no_second_prefect_server(tmp_path):
    # a variable another test of this worker left set must not change the build's path
    skip = ("PREFECT_API_URL", "TSRATE_ALWAYS_UNIT_TESTS", "TSRATE_VERBOSE")
    env = {k: v for k, v in os.environ.items() if k not in skip}
    env.update(
        TSRATE_PREFECT="always",
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        TSRATE_WAREHOUSE=str(tmp_path / "tsrate.duckdb"),
        PYTHONPATH=f"{project_dir() / 'src'}{os.pathsep}{project_dir()}",
    )
    command = [sys.executable, "-m", "tsrate.cli", *TINY_RUN]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=580, env=env, cwd=project_dir()
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "build (dbt): done" in output  # the build ran under Prefect, its lines logged
    # a summary line of the build's child reached the log ("models and seeds in 1.2s", or
    # "models, seeds and unit tests in ..." when its unit tests run with the models)
    assert re.search(r"models(, seeds and unit tests| and seeds) in \d", output), output[-3000:]
    assert "Starting temporary server" not in output, output[-3000:]
