"""`tsrate serve`: the suites' deployments (off unless their cron var is set) and a Prefect
server that does not answer (at the start: one line at once; later: one line after three
failed health checks), against real HTTP servers on local ports."""

from __future__ import annotations

import http.server
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from tsrate import TsrateError
from tsrate.config import project_dir
from tsrate.platform.serve import ScheduleConfig, build_deployments, server_watch


def test_suites_are_scheduled_only_when_their_cron_is_set():
    assert ScheduleConfig.from_vars({}).suite_crons == ()
    config = ScheduleConfig.from_vars(
        {"understanding_cron": "0 8 * * 0", "interpretability_cron": "", "reasoning_cron": None}
    )
    deployments = {d.name: d for d in build_deployments(config)}
    assert set(deployments) == {"tsrate-nightly", "tsrate-weekly", "tsrate-understanding"}
    understanding = deployments["tsrate-understanding"]
    assert understanding.entrypoint.endswith("understanding.py:understanding_flow")
    assert [s.schedule.cron for s in understanding.schedules] == ["0 8 * * 0"]
    assert understanding.parameters == {"lock_timeout": 3600.0}
    assert understanding.concurrency_limit == 1


def test_every_suite_can_be_scheduled_and_a_bad_suite_cron_is_named():
    crons = {"understanding_cron": "0 8 * * 0", "reasoning_cron": "0 9 * * 0"}
    crons["interpretability_cron"] = "0 10 1 * *"
    names = {d.name: d.entrypoint for d in build_deployments(ScheduleConfig.from_vars(crons))}
    assert names["tsrate-reasoning"].endswith("reasoning.py:reasoning_flow")
    assert names["tsrate-interpretability"].endswith("interpretability.py:interpretability_flow")
    with pytest.raises(TsrateError, match="reasoning_cron"):
        ScheduleConfig.from_vars({"reasoning_cron": "weekly please"})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200 if self.path.endswith("/health") else 404)
        self.end_headers()
        self.wfile.write(b"true")

    def log_message(self, *args) -> None:  # noqa: ANN002 - quiet
        pass


def test_the_watch_interrupts_once_the_server_stops_answering(monkeypatch):
    # interrupt_main does nothing where SIGINT is ignored, as in a pytest-xdist worker: the
    # watch's outright end (os._exit after the grace) then killed the worker. Python's own
    # handler for this test, and a grace the wait below cannot reach.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    monkeypatch.setenv("TSRATE_SERVER_GONE_GRACE_S", "600")
    try:
        _watch_a_server_that_stops()
    finally:
        signal.signal(signal.SIGINT, previous)


def _watch_a_server_that_stops() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/api"
    with pytest.raises(KeyboardInterrupt), server_watch(url, interval=0.2) as gone:
        time.sleep(1.5)  # answering: nothing happens
        assert gone == []
        server.shutdown()
        server.server_close()
        # three failed checks later the main thread is interrupted. interrupt_main only sets
        # Python's signal flag (a sleeping thread is not woken), so wait in short sleeps: one
        # 10 s sleep made the test last 11.5 s, and failed when the checks ran late under load
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(gone) == 1 and f"the Prefect server at {url} stopped answering" in gone[0]


def test_serve_on_a_server_that_does_not_answer_exits_with_one_line(tmp_path):
    url = f"http://127.0.0.1:{_free_port()}/api"
    env = dict(os.environ, PREFECT_API_URL=url, TSRATE_WAREHOUSE=str(tmp_path / "t.duckdb"))
    env["PYTHONPATH"] = os.pathsep.join([str(project_dir() / "src"), str(project_dir())])
    done = subprocess.run(
        [sys.executable, "-m", "tsrate.cli", "serve"],
        cwd=project_dir(),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"tsrate: error: the Prefect server at {url} does not answer; start it (`prefect server "
        "start`) or unset PREFECT_API_URL so that tsrate serve starts its own"
    ]
