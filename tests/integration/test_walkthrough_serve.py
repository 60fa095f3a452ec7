"""Ctrl-C on `tsrate serve` in a terminal: the terminal sends SIGINT to the whole foreground
process group, and the Prefect server serve had started was in it. The server stopped
first, so serve's Runner paused its deployments through a dead API and serve ended about a
minute later with "the Prefect server ... stopped answering (3 health checks ... failed)"
and exit 2, as if the server had crashed. The owned server now runs in a session of its
own: Ctrl-C reaches serve alone, which stops its runner and then the server, and exits 130
as every command does on Ctrl-C."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from tests.integration.interpreter_stand_in import gone, put_stand_in
from tests.integration.serve_process import start_serve, wait_for_line
from tsrate.config import project_dir
from tsrate.platform.prefect_server import owned_prefect_server

pytestmark = pytest.mark.slow


def test_the_owned_server_is_out_of_reach_of_the_terminals_ctrl_c(tmp_path, monkeypatch):
    stand_in = put_stand_in(tmp_path, monkeypatch)
    with owned_prefect_server(timeout=60):
        server = stand_in.record()["pid"]
        assert os.getpgid(server) != os.getpgid(0)
        assert os.getsid(server) != os.getsid(0)
    assert gone(server)  # still stopped with the block


def test_ctrl_c_on_serve_stops_it_with_130_and_no_error_line(tmp_path):
    log = tmp_path / "serve.log"
    env = dict(
        os.environ,
        TSRATE_WAREHOUSE=str(tmp_path / "tsrate.duckdb"),
        TSRATE_SERVER_CHECK_S="1",  # a server gone would be reported within seconds
        TSRATE_SERVER_GONE_GRACE_S="5",
        PREFECT_HOME=str(tmp_path / "prefect-home"),
        PYTHONPATH=f"{project_dir() / 'src'}{os.pathsep}{project_dir()}",
    )
    env.pop("PREFECT_API_URL", None)  # serve starts its own server
    serve = start_serve(env, log)
    try:
        seen = wait_for_line(serve, log, "Your deployments are being served", 300)
        time.sleep(3)  # the runner polls and the health checks pass
        url = re.search(r"UI and runs: (http://127\.0\.0\.1:\d+)", seen).group(1)
        os.killpg(serve.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        status = serve.wait(timeout=60)
    except BaseException:
        os.killpg(serve.pid, signal.SIGKILL)
        raise
    text = log.read_text()
    assert status == 130, text[-3000:]
    assert "stopped answering" not in text, text[-3000:]
    import httpx

    with pytest.raises(httpx.HTTPError):  # the server was stopped with serve
        httpx.get(f"{url}/api/health", timeout=2)
    try:
        os.killpg(serve.pid, 0)
    except ProcessLookupError:
        pass
    else:  # pragma: no cover - a leftover in serve's group fails the test and is killed
        os.killpg(serve.pid, signal.SIGKILL)
        raise AssertionError("a process of serve's group outlived it")
    assert not [line for line in text.splitlines() if line.startswith("tsrate: error")]
