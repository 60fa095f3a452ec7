"""`tsrate serve` on a real Prefect server that dies while it serves: serve notices within
a few health checks and exits with one line and status 2, instead of running on.

Prefect's Runner, told to stop, first pauses its deployments through the API; on a dead
server its client retries with backoff, so serve may end by the graceful path or by the
outright end after the grace period, whichever comes first: both give the same line and the
same status (on a slow machine the outright end is the usual one)."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from tests.integration.serve_process import start_serve, wait_for_line
from tsrate.config import project_dir
from tsrate.platform.prefect_server import owned_prefect_server


def test_serve_exits_with_one_line_when_its_prefect_server_dies(tmp_path):
    log = tmp_path / "serve.log"
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(tmp_path / "tsrate.duckdb"),
        TSRATE_SERVER_CHECK_S="1",
        TSRATE_SERVER_GONE_GRACE_S="5",  # the outright end (the usual one here) 25 s sooner
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PYTHONPATH=f"{project_dir() / 'src'}{os.pathsep}{project_dir()}",
    )
    with owned_prefect_server(timeout=240) as url:
        env["PREFECT_API_URL"] = url
        serve = start_serve(env, log)
        try:
            wait_for_line(serve, log, "serving on the Prefect API", 240)
            time.sleep(3)  # the runner is up and the health checks pass
            assert serve.poll() is None, log.read_text()
        except BaseException:
            os.killpg(serve.pid, signal.SIGKILL)
            raise
    # the server is stopped here; serve must notice and end on its own
    stopped = time.monotonic()
    try:
        status = serve.wait(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(serve.pid, signal.SIGKILL)
        raise AssertionError(
            f"serve ran on without its server:\n{log.read_text()[-3000:]}"
        ) from None
    errors = [line for line in log.read_text().splitlines() if line.startswith("tsrate: error:")]
    assert status == 2, log.read_text()[-3000:]
    assert len(errors) == 1 and f"the Prefect server at {url} stopped answering" in errors[0]
    assert time.monotonic() - stopped < 60
